
#include <shim.h>
/*
 * bsp/bsp.h: the PULP SDK's board-support header, as far as a training
 * library needs it on targets that are not a PULP SDK (host, QEMU): it brings
 * in pmsis.h. The published FP16 attention header includes it.
 */
#ifndef PTL_BSP_SHIM_H
#define PTL_BSP_SHIM_H

#include "pmsis.h"

#endif /* PTL_BSP_SHIM_H */

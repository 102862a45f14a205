/*
 * bsp/fs/readfs.h: the PULP SDK's read-only file system header, as far as a
 * training library needs it on targets that are not a PULP SDK: the file
 * handle type pi_fs_file_t, which the published FP16 attention header uses
 * in a prototype. No file system exists on the harness targets, so nothing
 * here opens or reads a file.
 */
#ifndef PTL_BSP_FS_READFS_SHIM_H
#define PTL_BSP_FS_READFS_SHIM_H

#include "bsp/bsp.h"

typedef struct pi_fs_file_s {
    int unused; /* placeholder: no file system on harness targets */
} pi_fs_file_t;

#endif /* PTL_BSP_FS_READFS_SHIM_H */

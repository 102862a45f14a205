/*
 * ptl_gvsoc.h: the fixed facts of the GVSOC pulp-open target, shared by the
 * bare-metal runtime (C and assembly) and the Python side
 * (harness/targets/gvsoc/ reads the PTL_GVSOC_* defines from this file, so
 * keep each one a plain `#define NAME value` on one line).
 *
 * Machine: gvsoc --target=pulp-open. A fabric controller (FC, hart id 0x3e0)
 * and one cluster of 8 cores (hart ids 0..7), rv32imfc plus the PULP
 * extensions, no A extension. GVSOC's ELF loader places every loadable
 * segment, then starts the FC at the ELF entry.
 */
#ifndef PTL_GVSOC_H
#define PTL_GVSOC_H

/* ---- Memories ---------------------------------------------------------------- */
/* L2: code, data, the FC's stack, the trap stacks, the heap's second arena
 * and the payload window. */
#define PTL_GVSOC_L2_BASE 0x1c000000
#define PTL_GVSOC_L2_SIZE 0x00190000
/* The cluster's L1 (TCDM): the cluster cores' stacks, then the heap's first
 * arena, where the runner's tensors live whenever they fit. */
#define PTL_GVSOC_L1_BASE 0x10000000
#define PTL_GVSOC_L1_SIZE 0x00010000
/* Where the case payload sits (a segment of the ELF that the harness fills
 * in each run's copy), and the most bytes it may have: the top of L2. */
#define PTL_GVSOC_PAYLOAD_ADDR 0x1c110000
#define PTL_GVSOC_PAYLOAD_MAX 0x00080000

/* ---- Cores ----------------------------------------------------------------------- */
#define PTL_GVSOC_CORES 8
#define PTL_GVSOC_FC_HART 0x3e0
/* Stacks in L1, as on a real PULP deployment: core 0 runs main() and the
 * runner's formatting, so it gets the larger one. The lowest word of each
 * holds a canary that the team checks after every fork. Small on purpose:
 * what they leave of L1 (about 50 KiB) must hold a 64x64x64 FP32 matmul's
 * three tensors; lib_c's deepest frame is 560 bytes (-fstack-usage). */
#define PTL_GVSOC_MAIN_STACK_SIZE 0xc00
#define PTL_GVSOC_STACK_SIZE 0x600
#define PTL_GVSOC_FC_STACK_SIZE 0x400
#define PTL_GVSOC_TRAP_STACK_SIZE 0x200

/* ---- Devices ------------------------------------------------------------------------ */
/* Cluster control: boot address of core i at BOOT_ADDR + 4*i, then the mask of
 * cores to start at FETCH_ENABLE. */
#define PTL_GVSOC_CLUSTER_BOOT_ADDR 0x10200040
#define PTL_GVSOC_CLUSTER_FETCH_ENABLE 0x10200008
/* The cluster's shared instruction cache is off at reset: without it every
 * fetch goes to L2 (about 15 cycles). Writing non-zero here enables it. */
#define PTL_GVSOC_ICACHE_ENABLE 0x10201400
/* Writing here flushes it (every bank of both levels). */
#define PTL_GVSOC_ICACHE_FLUSH 0x10201404
/* The event unit as each cluster core sees its own part of it (the demux). */
#define PTL_GVSOC_EU_DEMUX 0x10204000
/* One console channel per core: STDOUT + (cluster_id << 7) + (core_id << 3). */
#define PTL_GVSOC_STDOUT 0x1a10f000
/* Writing 0x80000000 | status ends the simulation with that exit status. */
#define PTL_GVSOC_EXIT 0x1a1040a0
/* The FC's timer (timer 0 counts the SoC clock's cycles) and the FC's
 * interrupt controller, whose line 10 is that timer: the FC sleeps between
 * two ticks and watches the open measured region (watchdog.c). */
#define PTL_GVSOC_FC_TIMER 0x1a10b000
#define PTL_GVSOC_FC_ITC 0x1a109800
#define PTL_GVSOC_FC_TIMER_LINE 10
/* SoC clock cycles between two looks of the watchdog. */
#define PTL_GVSOC_WATCH_PERIOD 200000

#endif /* PTL_GVSOC_H */

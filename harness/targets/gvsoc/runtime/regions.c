/*
 * Measured regions on the GVSOC runtime: the watchdog (watchdog.c) guards
 * each, the cores' PULP counters (team_eu.c) count it, and it goes out as
 * COUNTS (and SPILL) records.
 */
#include "ptl_gvsoc_hw.h"
#include "ptl_platform.h"
#include "ptl_protocol.h"

/* ---- Measured regions -------------------------------------------------------------
 * The counters are read on the cores themselves (team_eu.c); the region's
 * per-core cycles and instructions go out as one COUNTS record, which the
 * runner's VARIANT record names by its region number. A region that ran
 * with heap blocks in L2 (a case too large for L1) is also named by a SPILL
 * record: its cycles are partly L2's. */

static uint32_t regions_closed, region_l2_bytes;

void ptl_region_begin(uint32_t variant)
{
    (void)variant;
    region_l2_bytes = ptl_gvsoc_heap_l2_bytes();
    ptl_gvsoc_watch_region(1);
    ptl_gvsoc_counts_begin();
}

void ptl_region_end(uint32_t variant)
{
    (void)variant;
    uint32_t cycles[PTL_GVSOC_CORES], instructions[PTL_GVSOC_CORES];
    ptl_gvsoc_counts_end(cycles, instructions);
    ptl_gvsoc_watch_region(0);
    if (region_l2_bytes)
        ptl_emit_spill(regions_closed, region_l2_bytes);
    ptl_emit_counts(regions_closed++, PTL_GVSOC_CORES, cycles, instructions);
}

uint64_t ptl_region_elapsed(void) { return 0; }

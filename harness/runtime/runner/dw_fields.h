/*
 * dw_fields.h: which optional fields a library's depthwise struct has, for
 * the units that fill it (ops_conv_dw.c, and the training units' depthwise
 * layers). The published FP16 struct has no stride fields.
 *
 * build_units.field_queries reads this header for each unit that includes
 * it, so that the compile probe answers the query in every such unit.
 */
#ifndef DW_FIELDS_H
#define DW_FIELDS_H

#include "ptl_op_dtype.h"

#define DW_HAS_STRIDES \
    (PTL_HAS_FIELD(DepthWise_Conv_args, stride_h) && PTL_HAS_FIELD(DepthWise_Conv_args, stride_w))

#endif /* DW_FIELDS_H */

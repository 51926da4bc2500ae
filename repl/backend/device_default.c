/* device_default.c: the device description used when no GPU answers (the "none" backend and the
 * simulator's cuda.device()). Every figure comes from include/h200.h, the one description of the
 * modelled H200, so launch-limit errors and occupancy a learner sees without a GPU match the
 * real device. */
#include <stdio.h>
#include <string.h>

#include "device.h"
#include "h200.h"

void device_default_h200(cl_device *d) {
  memset(d, 0, sizeof *d);
  snprintf(d->name, sizeof d->name, "%s (modelled)", CL_H200_NAME);
#define SET(field, value) d->field = value;
  CL_H200_LIMITS(SET)
  CL_H200_CLOCKS(SET)
  CL_H200_TEXTURES(SET)
#undef SET
}

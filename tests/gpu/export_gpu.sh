#!/bin/sh
# tests/gpu/export_gpu.sh BIN: a session run on the GPU and one run on the simulator, each
# exported with cuda.export, built with nvcc and run on the GPU: every array must match what
# the session computed, and each launch must print its time (tests/export_nvcc.sh does the work).
BIN=$1
status=0
GPU=1 sh tests/export_nvcc.sh "$BIN" cuda || status=1
GPU=1 sh tests/export_nvcc.sh "$BIN" sim || status=1
exit $status

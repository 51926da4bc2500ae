-- h200.lua: figures that lessons quote, measured by lessons/data/measure.c (make lesson-data).
return {
  machine = "NVIDIA H200, driver 13000, runtime 13000, NVRTC 13.0",
  date = "2026-12-01",
  context_ms = 340,          -- the first CUDA call of a process (cudaFree(0))
  nvrtc_first_ms = 65,      -- NVRTC, the first compile in the process, to a CUBIN
  nvrtc_cubin_ms = 27,      -- NVRTC, a later compile of the same small module, to a CUBIN
  load_cubin_ms = 0.01,      -- cudaLibraryLoadData of that CUBIN
  load_ptx_ms = 8,         -- cudaLibraryLoadData of its PTX (the driver compiles it)
  copy_40mb_gbs = 3193,     -- device-to-device copy of 40 MiB (bytes read + written)
  copy_8gb_gbs = 4309,      -- the same of 8 GiB
  sticky = {                   -- after an illegal address
    launch = "cudaErrorIllegalAddress",
    next_call = "cudaErrorIllegalAddress",
    reset = "cudaSuccess",
    after_reset = "cudaErrorDevicesUnavailable",
    after_3s = "cudaErrorDevicesUnavailable",
  },
}

-- device_description.lua: the modelled H200 (include/h200.h), which the simulator and the
-- backend without a GPU report, against what the GPU's own runtime reports. Every figure of the
-- description is compared, so a wrong one (memory, L2, a clock) is named with both values. On
-- another GPU than an H200 the comparison is meaningless and is skipped.
local T = dofile("tests/lua/testlib.lua")
T.plan(2)
local test, check = T.test, T.check

local FIELDS = {"cc", "sm_count", "memory_total", "clock_khz", "memory_clock_khz", "bus_width",
  "l2_bytes", "max_threads_per_block", "max_threads_per_sm", "max_blocks_per_sm",
  "shared_per_block", "shared_per_block_optin", "shared_per_sm", "regs_per_block", "regs_per_sm",
  "warp_size", "max_texture_1d"}
local DIMS = {"max_block_dim", "max_grid_dim", "max_texture_2d", "max_texture_3d"}

local gpu = cuda.device()
local old = cuda.use("sim")
local model = cuda.device()
cuda.use(old)
local is_h200 = gpu.backend == "cuda" and gpu.name:find("H200", 1, true)

local function when_h200(name, f)
  if is_h200 then test(name, f) else T.skip(name, "not an H200: " .. tostring(gpu.name)) end
end

when_h200("every figure of the modelled H200 is the GPU's", function()
  local wrong = {}
  for _, f in ipairs(FIELDS) do
    if gpu[f] ~= model[f] then
      wrong[#wrong + 1] = string.format("%s: GPU %s, description %s", f, tostring(gpu[f]), tostring(model[f]))
    end
  end
  for _, f in ipairs(DIMS) do
    for axis = 1, #model[f] do
      if gpu[f][axis] ~= model[f][axis] then
        wrong[#wrong + 1] = string.format("%s[%d]: GPU %s, description %s", f, axis, tostring(gpu[f][axis]),
                                          tostring(model[f][axis]))
      end
    end
  end
  check(#wrong == 0, "include/h200.h differs from the GPU: " .. table.concat(wrong, "; "))
end)

when_h200("kernels compile for the same architecture on the GPU and on the simulator", function()
  local src = "__global__ void k(float *a) { a[0] = 1; }"
  local on_gpu = cuda.kernel(src):info().arch
  cuda.use("sim")
  local on_sim = cuda.kernel(src):info().arch
  cuda.use(old)
  check(on_gpu == on_sim, "GPU " .. tostring(on_gpu) .. ", simulator " .. tostring(on_sim))
end)

-- device_only.lua: cuda.module(file, {device_only = true}) loads a .cu that holds host code
-- too (main, cudaMalloc, k<<<...>>>, #include <helper_cuda.h>) by setting that code aside,
-- lists what it left out, and refuses what it cannot read with the line. Runs on any backend;
-- the kernel runs where one can.
local T = dofile("tests/lua/testlib.lua")
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr
T.plan(6)

local SRC = [[#include <stdio.h>
#include <string.h>
#include <helper_cuda.h>
#include <helper_functions.h>
const char *sSDKsample = "scale";
__global__ void scale(float *a, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] *= s;
}
int main(int argc, char **argv) {
  float *d;
  checkCudaErrors(cudaMalloc(&d, 4096));
  scale<<<4, 256>>>(d, 2.0f, 1024);
  getLastCudaError("scale");
  return 0;
}
]]

test("a file with host code: the kernel loads, and runs", function()
  local m = cuda.module(SRC, {device_only = true})
  checkeq(table.concat(m:kernels(), ","), "scale")
  if cuda.backend() == "none" then return end
  local a = cuda.array{1, 2, 3}
  m.scale[{1, 32}](a, 2.5, 3)
  local got = a:tolist()
  checkeq(got[1], 2.5); checkeq(got[2], 5); checkeq(got[3], 7.5)
end)

test("m:set_aside() lists the host variable and main, by line", function()
  local m = cuda.module(SRC, {device_only = true})
  local got = {}
  for _, s in ipairs(m:set_aside()) do got[#got + 1] = s.first .. "-" .. s.last .. " " .. s.what end
  checkeq(table.concat(got, "; "), "5-5 variable sSDKsample; 10-16 function main")
  m:set_aside()[1].what = "changed" -- a copy: the module's own list stays
  checkeq(m:set_aside()[1].what, "variable sSDKsample")
  checkeq(#cuda.module("__global__ void k() {}"):set_aside(), 0)
end)

test("without it, the message names the option", function()
  checkerr("cuda.module(file, {device_only = true})", cuda.module,
           "__global__ void k() {}\nint main() { return 0; }\n")
end)

test("a compile error names the file's own line", function()
  checkerr("kernel.cu:4", cuda.module,
           "int main() {\n  return 0;\n}\n__global__ void k() { undeclared(); }\n",
           {device_only = true})
end)

test("text it cannot read: refused by line", function()
  checkerr("cannot set the host code aside: the '{' on line 2 is never closed", cuda.module,
           "__global__ void k() {}\nint main() {\n", {device_only = true})
  checkerr("cannot set the host code aside: a '}' on line 1 closes nothing", cuda.module,
           "}\n__global__ void k() {}\n", {device_only = true})
end)

test("device_only must be a boolean", function()
  checkerr("opts.device_only must be true or false, got string", cuda.module,
           "__global__ void k() {}", {device_only = "yes"})
end)

return T.done()

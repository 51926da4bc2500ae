-- digests.lua: the bits of each corpus case's outputs (tests/corpus/corpus.lua), recorded
-- by make corpus-record on an NVIDIA H200, 2026-12-01.
return {
  ["f32 a*b+c as one fma, division and sqrt, correctly rounded"] = "4ad2baee784d071d",
  ["i32 and u64 multiply-high, division and remainder"] = "4ff68b58f807a2c4",
  ["warp shuffles: butterfly sum and prefix sum in f32"] = "71f6fb89f964edd8",
}

-- visual_help.lua: help's entries for cuda.sweep, cuda.occupancy, cuda.versus, cuda.plot,
-- cuda.roofline, cuda.timeline and cuda.last (visual.lua puts the functions into cuda).
-- Apart from visual.lua so that start-up does not parse this text: visual.lua reads it only
-- when help.lua is first loaded.

return {
  ["cuda.sweep"] = {
    sig = "cuda.sweep(kernel, {block sizes | {grid, block}, ...} [, args...])\n" ..
      "cuda.sweep{param, values, function(value, ...) ... end [, setup =, bytes =]}\n" ..
      "  -> SweepResult",
    text = "Runs a kernel once per block size (or {grid, block} pair) and shows the " ..
      "median time, " ..
      "the effective bandwidth (bytes of the array arguments per launch, or bytes = ...) and " ..
      "the occupancy of each, with a bar chart and the best marked. With block sizes alone the " ..
      "grid gives one thread per element of the largest array; grid = function(block) ... end " ..
      "changes that. The table form sweeps any parameter: setup(value) prepares untimed, " ..
      "the function is timed. Options in the list's table: reps, warmup, shared, bytes, n. " ..
      "On the simulator the times are modelled H200 times, one launch per configuration " ..
      "unless reps is given, and a \"bound by\" column names the limit that sets each time " ..
      "(DRAM, latency, block sched., ...; s[i].model explains it). " ..
      "A configuration that fails becomes a row with its error; on the simulator a fault's " ..
      "row names the kernel, block, thread and line. " ..
      "Ctrl-C stops it; the rows so far stay in cuda.last.",
    example = "k = cuda.kernel \"vector_add.cu\"\nn = 100000\n" ..
      "a, b, c = cuda.rand(n), cuda.rand(n), cuda.array(n)\n" ..
      "s = cuda.sweep(k, {32, 64, 128, 256, 512, 1024}, a, b, c, n)\nprint(s)\n" ..
      "print(s.best.block, s[1].median, s[1].gbps)",
    fields = "rows s[1] .. s[#s] with label, block, grid, median, min, max, gbps, occupancy, " ..
      "limit, error (the whole message), fault (where a launch faulted, on the simulator: " ..
      "kernel, block {x, y, z}, thread {x, y, z}, at, line), model (on the model clock); " ..
      "best, worst, param, clock, device, partial, n (the threads the grids were rounded up " ..
      "from, when the sweep chose them) and n_from (\"array\" or \"n\")",
  },
  ["cuda.occupancy"] = {
    sig = "cuda.occupancy(kernel, block [, shared]) -> Occupancy",
    text = "How many blocks of the kernel fit on one SM at once, the share of the SM's warps " ..
      "they fill, and which limit decides it: threads, blocks, registers or shared memory " ..
      "(shared = dynamic bytes per block). Computed as CUDA's occupancy calculator does; on " ..
      "the GPU the CUDA runtime's own figure is used when the kernel offers it. When ptxas " ..
      "spilled registers to local memory (k:info().spill_bytes), the explanation says so: " ..
      "the occupancy was bought with memory traffic.",
    example = "k = cuda.kernel \"vector_add.cu\"\nprint(cuda.occupancy(k, 256))\n" ..
      "print(cuda.occupancy(k, 32).limit)",
    fields = "blocks_per_sm, active_warps, max_warps, occupancy (0..1), limit, binding, " ..
      "limits {warps, blocks, registers, shared}, registers, regs_per_warp, shared_per_block, " ..
      "spill_bytes, spill_load_bytes",
  },
  ["cuda.versus"] = {
    sig = "cuda.versus {cpu = f, kernel = f [, h2d = f, d2h = f, check =, reps =]}\n" ..
      "  -> VersusResult",
    text = "Times a CPU function against a GPU pipeline: copy in (h2d), kernel, copy out (d2h), " ..
      "each on its own, and draws the GPU's total as a stacked bar next to the CPU's. It then " ..
      "compares the CPU's result (what cpu returns) with the GPU's (what d2h returns) and says " ..
      "how much faster the winner is, end to end and kernel only. On the simulator the " ..
      "GPU side is modelled H200 time, the copies over PCIe included; the CPU side is " ..
      "always this machine's real time.",
    example = "k = cuda.kernel \"inc.cu\"\nn = 100000\nh = cuda.host(n)\nout = cuda.host(n)\n" ..
      "a = cuda.array(n)\n" ..
      "v = cuda.versus{\n  cpu = function()\n    local r = {}\n    for i = 1, n do r[i] = h[i - " ..
        "1] + 1 end\n" ..
      "    return r\n  end,\n" ..
      "  h2d = function() a:copyfrom(h) end,\n" ..
      "  kernel = function() k[{(n + 255) // 256, 256}](a, n) end,\n" ..
      "  d2h = function() a:copyto(out) return out end,\n  reps = 3 }\nprint(v)",
    fields = "cpu (a timing), gpu (ms), kernel (ms), stages {name, label, median, time, model}, " ..
      "speedup, speedup_kernel, compare, clock, device",
  },
  ["cuda.plot"] = {
    sig = "cuda.plot(result, \"file.svg\" [, {kind = \"bars\" | \"lines\", title =}]) -> file",
    text = "Writes a result of cuda.sweep, cuda.versus, cuda.roofline or cuda.timeline as an " ..
      "SVG chart with labelled axes " ..
      "and units, for slides and handouts. Open it in a browser. Modelled times (on the " ..
      "simulator) say \"modelled H200 time\" in the title and on the axis.",
    example = "k = cuda.kernel \"vector_add.cu\"\nn = 10000\n" ..
      "a, b, c = cuda.rand(n), cuda.rand(n), cuda.array(n)\n" ..
      "s = cuda.sweep(k, {64, 256, reps = 2}, a, b, c, n)\ncuda.plot(s, os.tmpname() .. \".svg\")",
  },
  ["cuda.roofline"] = {
    sig = "cuda.roofline({point, ...} [, {title =, peaks =}]) -> RooflineResult\n" ..
      "  point: {name =, flops =, bytes =, ms = [, precision = \"fp64\"]}\n" ..
      "         or the result of cuda.roofline.measure(...)",
    text = "Places kernels on the H200's roofline: across, arithmetic intensity (FLOPs per byte " ..
      "moved to or from DRAM); up, the GFLOP/s each achieved. Above them the roofs: DRAM " ..
      "bandwidth times intensity, up to the FP32 or FP64 peak, meeting at the ridge point. " ..
      "A kernel left of the ridge is bound by memory, right of it by arithmetic; how close it " ..
      "comes to its roof is how much is left to gain. The roofs are the timing model's, " ..
      "measured on an H200 (cuda.roofline.peaks()). Prints a log-log chart; cuda.plot(r, " ..
      "\"roofline.svg\") draws it as SVG. On the simulator the times are modelled H200 times.",
    example = "r = cuda.roofline({\n  {name = \"vector add\", flops = 1e7, bytes = 1.2e8, ms " ..
      "= 0.043},\n" ..
      "  {name = \"matmul\", flops = 2.1e9, bytes = 1.3e7, ms = 0.31},\n})\n" ..
      "print(r)\nprint(r[1].intensity, r[1].gflops, r[1].bound, r.ridge.fp32)",
    fields = "points r[1] .. r[#r] with name, flops, bytes, ms, precision, intensity " ..
      "(FLOP/byte), " ..
      "gflops, gbs, roof (GFLOP/s above it), of_roof (0..1), bound (\"memory\" or \"compute\"); " ..
      "peaks {dram_gbs, fp32_gflops, fp64_gflops}, ridge {fp32, fp64}, clock",
  },
  ["cuda.roofline.measure"] = {
    sig = "cuda.roofline.measure(name, fn [, {flops =, bytes =, precision =, reps =}])\n" ..
      "  -> point",
    text = "Times fn, which must launch one kernel, and returns its point for cuda.roofline. " ..
      "On the simulator the FLOPs and DRAM bytes come from the launch's counters and the time " ..
      "is the modelled H200 time; arrays smaller than the L2 cache (cuda.device().l2_bytes) " ..
      "never reach DRAM, so give " ..
      "bytes = ... for those. On a GPU nothing counts them: pass flops and bytes, counted " ..
      "from the kernel (a vector add of n floats: n FLOP, 12n bytes).",
    example = "k = cuda.kernel \"vector_add.cu\"\nn = 100000\n" ..
      "a, b, c = cuda.rand(n), cuda.rand(n), cuda.array(n)\n" ..
      "launch = function() k[{(n + 255) // 256, 256}](a, b, c, n) end\n" ..
      "p = cuda.roofline.measure(\"add\", launch, {flops = n, bytes = 12 * n})\n" ..
      "print(p)\nprint(cuda.roofline({p}))",
  },
  ["cuda.roofline.peaks"] = {
    sig = "cuda.roofline.peaks() -> {dram_gbs =, fp32_gflops =, fp64_gflops =, device =}",
    text = "The roofs cuda.roofline draws: the DRAM bandwidth and the FP32 and FP64 peaks of " ..
      "the GPU the timing model describes (an H200's, from cuda.simopts().perf), in GB/s and " ..
      "GFLOP/s. Pass other peaks to cuda.roofline as {peaks = {...}} to draw another GPU's.",
    example = "p = cuda.roofline.peaks()\nprint(p.dram_gbs, p.fp32_gflops, p.fp64_gflops)",
  },
  ["cuda.timeline"] = {
    sig = "cuda.timeline(fn) -> Timeline",
    text = "Runs fn and records every copy and kernel it queued: stream, kind, direction, " ..
      "bytes and pinned for copies, the name for kernels, and start and stop in ms from when fn " ..
      "began. Prints as a chart with one row per stream, as Nsight Systems draws it, so " ..
      "overlap shows; cuda.plot(tl, \"file.svg\") saves it. On the simulator the times are " ..
      "modelled H200 time: a copy engine per direction and one compute engine.",
    example = "h = cuda.host(100000, \"f32\", {pinned = true})\na = cuda.array(100000)\n" ..
      "s = cuda.stream()\ntl = cuda.timeline(function() cuda.copy(a, h, {stream = s}) " ..
        "end)\nprint(tl)",
    fields = "ops {stream, kind, dir, bytes, pinned, name, start, stop}, streams {id, " ..
      "label, ops}, " ..
      "total (ms), clock, device",
  },
  ["cuda.last"] = {
    sig = "cuda.last",
    text = "The result of the latest cuda.sweep or cuda.versus, also when Ctrl-C stopped it: " ..
      "then it holds the rows measured so far and says it is partial.",
    example = "print(cuda.last)",
  },
}

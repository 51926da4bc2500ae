-- help.lua: help(), the learner's built-in reference.
--
-- help() gives an overview; help(x) explains one function, type or module,
-- found either by value (help(cuda.array), help(a) for an array a, help(t) for
-- a timing result) or by name (help "cuda.array", help "Array", help "time").
-- Each entry is short on purpose: a sentence or two, the signature, fields
-- where the result is a table, and one example that runs as written.
--
-- Design stance:
--  * Functions are recognised by identity, not by name: the reverse map from
--    function values to names is rebuilt at each call by walking cuda, cpu and
--    the metatables of the C types, so it is never stale and costs nothing
--    at start-up (this module itself is only loaded on the first help call).
--  * Text lives in one table (ENTRIES) that reads like a small manual and is
--    checked by the unit tests: every function the cuda module documents has
--    an entry with a signature and an example.
--  * help prints and returns nothing, like lua.c's built-ins; help.text(x)
--    returns the same text for tests and for other modules.
--  * Other modules (the lesson runner) add their own entries with
--    help.register, so help stays the one place to look.

-- Standard functions are captured at load time: a learner may well name a
-- variable `table` or `type`, and this module must keep working when they do.
local _G, assert, debug, getmetatable, io, ipairs = _G, assert, debug, getmetatable, io, ipairs
local math, next, pairs, rawget, select, string = math, next, pairs, rawget, select, string
local table, type = table, type

local help = {}

local WIDTH = 78

-- ENTRIES[name] = {name, sig, text, example, fields}; ORDER keeps the order of
-- definition, which is the order of overviews.
local ENTRIES, ORDER = {}, {}

-- Defines one entry. `text` may span several sentences; its first sentence
-- is the one-line summary in overviews.
local function def(name, sig, text, example, fields)
  if not ENTRIES[name] then ORDER[#ORDER + 1] = name end
  ENTRIES[name] = { name = name, sig = sig, text = text, example = example, fields = fields }
  return ENTRIES[name]
end

-- The timing model's parameters from the C side, one line each ("dram_gbs (GB/s): DRAM
-- bandwidth ..."), for the listing after cuda.perf_params' text: a new parameter needs no edit
-- here.
local function perf_lines()
  local cuda = rawget(_G, "cuda")
  local list = type(cuda) == "table" and rawget(cuda, "perf_params")
  local lines = {}
  for _, p in ipairs(type(list) == "table" and list or {}) do
    lines[#lines + 1] = string.format("%s (%s): %s", tostring(p.name), tostring(p.unit),
      tostring(p.doc))
  end
  return lines
end

---------------------------------------------------------------- the manual --

-- Examples that need a kernel start by compiling this one, so that each
-- example runs on its own, pasted at a fresh prompt.
local INC = "inc = cuda.kernel[[__global__ void inc(float *a, int n) {\n" ..
  "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] += 1; }]]\n"

def("cuda", "cuda",
  "The cuda module: device information, device arrays, kernels compiled at run time, " ..
  "timing and comparison.")

def("cuda.device", "cuda.device() -> Device",
  "Describes the GPU in use. Print it for a summary card; read single numbers from its fields.",
  "d = cuda.device()\nprint(d.name, d.sm_count, d.max_threads_per_block)",
  "name, backend, cc, sm_count, memory_total, clock_khz, memory_clock_khz, bus_width, " ..
  "l2_bytes, max_threads_per_block, max_threads_per_sm, max_blocks_per_sm, " ..
  "shared_per_block, shared_per_block_optin, shared_per_sm, regs_per_block, regs_per_sm, " ..
  "warp_size, max_block_dim, max_grid_dim, max_texture_1d, max_texture_2d, max_texture_3d, " ..
  "driver_version, runtime_version")

def("cuda.array", "cuda.array(n | table [, dtype]) -> Array",
  "A device array of n zeros, or of the numbers in a Lua table. " ..
  "dtype is {dtypes}; f32 if left out.",
  "a = cuda.array(1000)\nb = cuda.array({1, 2, 3}, \"i32\")")

def("cuda.dtypes", "cuda.dtypes -> {{name =, size =, c_type =, kind =, digits =, rtol =}, ...}",
  "The element types arrays can hold, in order: each with its name, its size in bytes, the " ..
  "C type a kernel's pointer names (float *, unsigned long long *), its kind (\"float\", " ..
  "\"half\", \"signed\" or \"unsigned\"), for a float the digits it prints, and the " ..
  "relative tolerance cuda.compare gives it by default (0: compare's own, 1e-5). " ..
  "Lua's integers are signed 64-bit, so a u64 element above 2^63 - 1 reads as the negative " ..
  "integer with the same bits, as string.unpack(\"J\") gives it: string.format(\"%u\", v) " ..
  "prints it, math.ult compares it, and an array prints it unsigned. Storing such an " ..
  "integer, or a whole float up to 2^64 - 1, gives the same bits back.",
  "for _, d in ipairs(cuda.dtypes) do print(d.name, d.size, d.c_type) end")

def("cuda.zeros", "cuda.zeros(n [, dtype]) -> Array",
  "A device array of n zeros; the same as cuda.array(n, dtype).",
  "z = cuda.zeros(1024, \"i32\")")

def("cuda.empty", "cuda.empty(n [, dtype]) -> Array",
  "A device array of n elements that the constructor does not fill. On a GPU it holds " ..
  "whatever the memory held; on the simulator it reads as zeros, and " ..
  "cuda.sanitize{init = true} reports a kernel's read of an element nothing has written " ..
  "since (copies and fills from the host count as writes).",
  "e = cuda.empty(1000)\ne:fill(1)")

def("cuda.ones", "cuda.ones(n [, dtype]) -> Array",
  "A device array of n ones.",
  "o = cuda.ones(1000)")

def("cuda.full", "cuda.full(n, value [, dtype]) -> Array",
  "A device array of n elements, all equal to value.",
  "f = cuda.full(8, 3.5)")

def("cuda.arange", "cuda.arange(n [, dtype]) -> Array",
  "A device array holding 0, 1, ..., n - 1.",
  "r = cuda.arange(10, \"i32\")   -- [0, 1, ..., 9]")

def("cuda.rand", "cuda.rand(n [, dtype [, seed]]) -> Array",
  "Uniform random numbers in [0, 1). The same seed gives the same numbers.",
  "x = cuda.rand(1000000, \"f32\", 42)")

def("cuda.host", "cuda.host(n | table [, dtype [, {pinned = true}]]) -> HostBuffer",
  "A buffer in CPU memory with the same interface as an Array. " ..
  "Copies between the GPU and pinned (page-locked) memory run several times faster " ..
  "than from ordinary, pageable memory.",
  "h = cuda.host(1000, \"f32\", {pinned = true})\na = cuda.array(1000)\na:copyto(h)")

def("cuda.copy", "cuda.copy(dst, src [, {stream =, offset =, count =, src_offset =,\n  " ..
  "dst_offset =}]) -> dst",
  "Copies count elements (the rest of src by default) from src, starting at src_offset, to dst, " ..
  "starting at dst_offset; offset sets both. Arrays and host buffers, any direction. With a " ..
  "stream, a copy between host and device is queued on it and returns at once when the host " ..
  "buffer is pinned; from pageable memory the host waits for it.",
  "h = cuda.host(1000, \"f32\", {pinned = true})\na = cuda.array(1000)\ns = cuda.stream()\n" ..
  "cuda.copy(a, h, {stream = s, offset = 500, count = 500})\ns:sync()")

def("cuda.stream", "cuda.stream() -> Stream",
  "A queue of GPU work: copies (cuda.copy with stream = s) and launches (k[{grid, block, " ..
  "stream = s}]) on one stream run in order, and may run at the same time as work on other " ..
  "streams. s:sync() waits for its work, s:wait(ev) makes its later work wait for an event, " ..
  "s:free() (or <close>) releases it. Work given no stream goes to the default stream, which " ..
  "waits for all others. On the simulator the timing model schedules streams as an H200 would.",
  "s = cuda.stream()\nprint(s, s.id)\ns:sync()")

def("cuda.event", "cuda.event([stream]) -> Event",
  "An event recorded on the stream (the default stream without one): it happens when the work " ..
  "queued there before it is done. ev:record([s]) records it again, ev:elapsed(ev2) gives the " ..
  "milliseconds from ev to ev2, and s:wait(ev) orders work across streams.",
  "s = cuda.stream()\na = cuda.event(s)\nb = cuda.event(s)\nprint(a:elapsed(b))")

def("cuda.kernel", "cuda.kernel(source | file [, {options =, name =, warnings =}]) -> Kernel",
  "Compiles CUDA C into a kernel. NVRTC compiles the source text (or the file) and the " ..
  "result is its one __global__ function, or the one opts.name names. " ..
  "opts.options passes compiler flags such as " ..
  "\"-use_fast_math\" or \"-DN=4\"; a compile error quotes your line with a caret. " ..
  "The compiler's warnings about your own file (not the toolkit's headers), such as " ..
  "'variable \"b\" was declared but never referenced', are shown once a session when a " ..
  "compile succeeds, from the cache too; opts.warnings = false hides them.",
  "inc = cuda.kernel[[\n__global__ void inc(float *a, int n) {\n" ..
  "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) a[i] += 1;\n}]]")

def("cuda.module", "cuda.module(source | file [, opts]) -> Module",
  "Compiles several kernels at once. Each kernel in the source is a field of the module. " ..
  "opts is as for cuda.kernel; opts.device_only = true loads a .cu that holds host code " ..
  "too (main, cudaMalloc, k<<<...>>>, #include <helper_cuda.h>): its host functions and " ..
  "variables are set aside (m:set_aside() lists them, by line) and host-only headers get " ..
  "empty stand-ins, every other line compiled where it was.",
  "m = cuda.module[[\n__global__ void set(float *a) { a[threadIdx.x] = 1; }\n" ..
  "__global__ void add(float *a) { a[threadIdx.x] += 1; }]]\nprint(m:kernels())")

def("cuda.time", "cuda.time(fn [, {warmup = 2, reps = 20}]) -> TimeResult",
  "Times a function. On the GPU it uses CUDA events: it calls fn warmup times untimed, " ..
  "then reps times, timing each call. Warm-up keeps one-off costs, such as loading a " ..
  "kernel, out of the figures; the median is the figure to quote. " ..
  "On the simulator it is modelled H200 time (clock \"model\"): what fn's launches " ..
  "and copies would take on an H200, worked out from the simulator's counters. The model " ..
  "is deterministic, so warmup is 0 and reps 1 there. t.model says what binds the last " ..
  "launch and why (cuda.stats() prints all of it); t.sim_ms is the simulator's own time " ..
  "on this CPU, never part of the modelled figures. cuda.simopts{model = false} times " ..
  "the simulator itself instead (clock \"sim\").",
  INC .. "a = cuda.ones(1000000)\n" ..
  "t = cuda.time(function() inc[{(#a + 255) // 256, 256}](a, #a) end)\n" ..
  "print(t, t.median, t.clock)",
  "median, min, max, mean (in ms), reps, samples, unit, clock (\"gpu\", \"model\", " ..
  "\"sim\" or \"cpu\"); on the model clock also device, sim_ms {median, min, max} and " ..
  "model (the last launch's explanation, as in cuda.stats().model; nil without a launch)")

def("cuda.blas", "cuda.blas.gemm(a, b, c, m, n, k [, {alpha =, beta =, trans_a =, " ..
  "trans_b =}])\ncuda.blas.info() -> table",
  "Matrix multiply, c = alpha * op(a) * op(b) + beta * c, for row-major f32 or f64 device " ..
  "arrays (a is m x k, b k x n): cuBLAS on a GPU; on the simulator the host's BLAS computes " ..
  "it and cuda.time gives cuBLAS's time on an H200. cuda.blas.info() names the library.",
  "a, b = cuda.rand(64 * 32, \"f32\", 1), cuda.rand(32 * 16, \"f32\", 2)\n" ..
  "c = cuda.zeros(64 * 16)\ncuda.blas.gemm(a, b, c, 64, 16, 32)\n" ..
  "print(c[0], cuda.blas.info().library)")

def("cuda.cache", "cuda.cache() -> CacheInfo;  cuda.cache.info() the same;  cuda.cache.clear()",
  "The kernel cache: compiled kernels kept on disk, so that a kernel compiled once, now or " ..
  "on an earlier day, loads without NVRTC. cuda.cache() says where it is, how big, and how " ..
  "often it saved a compile since cudalab started; cuda.cache.clear() empties it.",
  "print(cuda.cache())")

def("cuda.compare", "cuda.compare(x, y [, {rtol = 1e-5, atol = 1e-8}]) -> ok, CompareResult",
  "Compares two arrays element by element. x and y are arrays, host buffers or Lua " ..
  "tables of the same length; elements match where |x - y| <= atol + rtol * |y|. With an " ..
  "f16 side the defaults are rtol = 1e-3, atol = 1e-5; with a bf16 side rtol = 1.6e-2. " ..
  "It returns true or false first and the report second, so assert(cuda.compare(x, y)) " ..
  "stops a script on a mismatch with the report (the first mismatches) as its message.",
  "ok, r = cuda.compare(cuda.ones(100), cuda.full(100, 1.000001))\n" ..
  "print(ok, r.max_abs)\nassert(cuda.compare(cuda.arange(4), {0, 1, 2, 3}))",
  "ok, n, mismatches, max_abs, max_rel, first (0-based indices), x_first, y_first, rtol, atol")

def("cuda.load", "cuda.load(path [, {format =, dtype =, host = true}]) -> Array, shape",
  "Reads an array from a .npy file (NumPy's np.save, any shape in C order, of a type cudalab " ..
  "holds) or a .csv file (numbers, commas between them; blank lines and lines starting with # " ..
  "are skipped), as the extension or format says. The array is flat, in row order; shape is " ..
  "the file's ({rows, columns} for a CSV of several columns). A CSV loads as f32 unless dtype " ..
  "says; dtype = \"bf16\" reads back what a:save wrote of a bf16 array. host = true gives a " ..
  "HostBuffer. A file that is not what its extension says, or holds what an array cannot, is " ..
  "refused with what is wrong and where.",
  "p = os.tmpname() .. \".npy\"\ncuda.arange(6):save(p, {shape = {2, 3}})\n" ..
  "a, shape = cuda.load(p)\nprint(a, shape[1], shape[2])")

def("cuda.meminfo", "cuda.meminfo() -> MemInfo",
  "Free, used and total device memory, in bytes, and arrays: what this session's own " ..
  "arrays hold (on a GPU, used counts every program's memory). Arrays are freed by the " ..
  "garbage collector; a:free() or collectgarbage() gives the memory back sooner. On the " ..
  "simulator the device is the H200's size, but its memory is this computer's: " ..
  "host_available says how much of that there is.",
  "print(cuda.meminfo())\nprint(cuda.meminfo().free)",
  "free, used, total, arrays, host_available (simulator)")

def("cuda.limits",
  "cuda.limits([{memory = bytes, kernel_time = seconds, by = \"class\"}]) -> table",
  "Caps on this session, as a class sets them for each learner. memory is the device " ..
  "memory arrays may hold (host buffers, pinned ones too, do not count): an array past it " ..
  "is refused with a message that says what is in use. kernel_time is how long one launch " ..
  "may run: on the simulator a longer one is stopped and the session goes on; on a GPU, " ..
  "where nothing stops a running kernel, the engine restarts as after a crash. A limit once " ..
  "set can be lowered, never raised or removed. With no argument it changes nothing and " ..
  "returns the limits in force. by = \"class\" says a class sets them: the messages of an " ..
  "array past the memory limit and of a launch past the time limit then speak of the " ..
  "class's allowance per learner, and otherwise of this session's limit.",
  "print(cuda.limits().memory_in_use)\na = cuda.array(1000)\n" ..
  "print(cuda.limits().memory_in_use)   -- 4000 bytes more",
  "memory (bytes), kernel_time (seconds): nil where no limit is set; memory_in_use, the " ..
  "bytes your arrays hold now")

def("cuda.gpu_admit", "cuda.gpu_admit{key =, sessions_max =, memory_needed =} -> table",
  "For a class whose learners share GPUs; its settings call this at start-up. Picks the " ..
  "GPU with the most free memory that has room for memory_needed bytes and a CUDA context, " ..
  "takes one of its sessions_max session slots for the class named key, and holds it until " ..
  "the session ends. It creates no CUDA context (the GPU is used from the first array or " ..
  "kernel on) and does not switch backends: when ok is false, cuda.use(\"sim\") does.",
  "r = cuda.gpu_admit{key = \"my-class\", sessions_max = 30}\n" ..
  "print(r.ok, r.ok and r.device or r.why)",
  "ok; with ok: device, slot, sessions (on that GPU, this one included), pci, free and " ..
  "total (bytes; nil without NVML, and note says so); without ok: why")

def("cuda.sync", "cuda.sync()",
  "Waits until all work queued on the GPU has finished. A launch returns before the " ..
  "kernel ends, so sync before reading a clock; cuda.time and copies do it for you.",
  "a = cuda.ones(1000000)\na:fill(0)\ncuda.sync()")

def("cuda.launches", "cuda.launches([on]) -> launches",
  "A log of the launches made from Lua. cuda.launches(true) starts it (empty), false stops " ..
  "it; cuda.launches() returns the launches since, oldest first: name, kernel, grid and " ..
  "block ({x, y, z}), shared (dynamic shared memory, bytes), args and n (their count), " ..
  "captured (recorded into a cuda.graph rather than run); the last 256, with dropped counting " ..
  "older ones. Library calls, prefetches, advice and graph replays are in it too, with no " ..
  "kernel: cuda.blas.gemm, Array:prefetch, Array:advise, Graph:launch, with their arguments. " ..
  "It keeps no array alive. Lesson checks read it to see what ran, and in which order.",
  INC .. "a = cuda.zeros(1000)\ncuda.launches(true)\ninc[{4, 256}](a, #a)\n" ..
  "l = cuda.launches()\nprint(#l, l[1].name, l[1].grid.x, l[1].args[1] == a)\ncuda.launches(false)")

def("cuda.record", "cuda.record([on]) -> summary",
  "Records the session for cuda.export. cuda.record(true) starts the record (empty), false " ..
  "stops it (kept); cuda.record() says what it holds: on, launches, arrays, sources, events, " ..
  "bytes, and problem when something cannot be exported. While it is on, every launch from " ..
  "Lua is kept with its kernel's source, configuration and arguments, and its arrays are " ..
  "copied to the host before and after it, so that whatever the host did to them in between " ..
  "becomes one upload: timings taken meanwhile include those copies. Repeated identical " ..
  "launches (a loop, cuda.time's reps) become one launch in a loop. It is bounded (64 MiB of " ..
  "contents, 4096 uploads and launches) and a check's own launches are left out.",
  INC .. "cuda.record(true)\na = cuda.ones(1000)\ninc[{4, 256}](a, #a)\n" ..
  "print(cuda.record().launches)")

def("cuda.export", "cuda.export(path) -> {program, data, launches, arrays, ...}",
  "Writes the recorded session (cuda.record) as a CUDA C++ program, path being its .cu " ..
  "file: the kernels' sources as compiled, the arrays made with cudaMalloc and given the " ..
  "contents the session gave them, the launches in order with their <<<grid, block>>> and " ..
  "arguments, each timed with CUDA events, every CUDA call checked by a CHECK macro naming " ..
  "the call, file and line, and the final arrays compared with the session's (integers " ..
  "exactly, floats within a relative tolerance). Contents over 4 KiB go to a .data file " ..
  "beside it, which the program reads. Build it with nvcc -o prog prog.cu. Arrays freed " ..
  "since are exported; __constant__ contents (m:constant) are set with cudaMemcpyToSymbol " ..
  "before the launch that first finds them, and so are __device__ and __managed__ variables " ..
  "where the session changed them between launches; a cooperative launch is made with " ..
  "cudaLaunchCooperativeKernel; __constant__ structs, " ..
  "struct arguments by value, cuda.ptrs arrays and launches captured in a cuda.graph are not.",
  INC .. "cuda.record(true)\na = cuda.ones(1000)\ninc[{4, 256}](a, #a)\n" ..
  "p = os.tmpname()\nout = cuda.export(p .. \".cu\")\nprint(out.launches, out.arrays)\n" ..
  "os.remove(p)\nos.remove(out.program)")

def("cuda.use", "cuda.use(name) -> previous",
  "Chooses where new arrays and kernels go: \"cuda\" (the GPU), \"sim\" (the simulator) " ..
  "or \"none\" (compile and check only). Arrays and kernels made before stay where they are.",
  "old = cuda.use(\"none\")\nprint(cuda.backend())\ncuda.use(old)")

def("cuda.stats", "cuda.stats([{lines = true, perf = {...}}]) -> Stats",
  "The simulator's counters for the last launch: warp and thread instructions, global " ..
  "load/store requests and 32-byte sectors, shared-memory wavefronts and bank conflicts, " ..
  "divergent branches. With lines = true, s.lines[n] holds the counts of source line n. " ..
  "s.model is the performance model's account of the launch, printed last: its modelled " ..
  "H200 time, the limit that binds it and why, bytes and FLOPs against the peaks, " ..
  "occupancy and waves, and the time each limit alone would take. It answers questions " ..
  "such as why 32 threads per block is slow. perf = {dram_gbs = 8000} prices the same " ..
  "launch again with some of the model's parameters changed (cuda.simopts().perf lists them " ..
  "with the H200's values): what if the memory were twice as fast?",
  "cuda.use(\"sim\")\nk = cuda.kernel \"vector_add.cu\"\nn = 1 << 16\n" ..
  "a, b, c = cuda.rand(n), cuda.rand(n), cuda.array(n)\n" ..
  "k[{n // 32, 32}](a, b, c, n)   -- 32 threads per block\nprint(cuda.stats())",
  "warp_insts, thread_insts, ld_requests, ld_sectors, st_requests, st_sectors, " ..
  "shared_wavefronts, bank_conflicts, divergent_branches, lines, file; model {time_ms, " ..
  "launch_us, limit, limit_text, why, terms {key, what, ms}, dram_bytes, l2_bytes, flops, " ..
  "achieved_gbs, peak_gbs, achieved_gflops, peak_gflops, blocks_per_sm, warps_per_sm, " ..
  "occupancy, waves, l2_hit_rate, l1_hit_rate} (nil when the model is off)")

def("cuda.simopts", "cuda.simopts([{race_check =, threads =, model =, stack =, perf =,\n  " ..
  "block_order =, seed =}]) -> table",
  "Sets simulator options and returns those in force. race_check reports shared-memory " ..
  "races between the threads of a block, and a lane that uses what a shuffle read from a " ..
  "lane not running it (undefined on a GPU; reading it and leaving it out is fine): " ..
  "\"warn\" (the default) prints the race on stderr " ..
  "and keeps the launch's results, \"fail\" (or true) makes it an error, as lesson checks " ..
  "do, and false turns checking off. Two lanes of one warp need a __syncwarp() between " ..
  "them, as a GPU does not run them in lockstep; a warning is not given for accesses a " ..
  "warp made in lockstep (the legacy warp-synchronous idiom), a failure is. threads is " ..
  "how many host threads " ..
  "run blocks (0: all cores; 1 keeps device printf in order). model = false turns the " ..
  "performance model off: cuda.time then gives the simulator's own CPU time (clock " ..
  "\"sim\") instead of modelled H200 time, and cuda.stats() has no model. perf is the " ..
  "model's parameters, measured on an H200 (help \"cuda.perf_params\" says what each " ..
  "means); setting some of them models another GPU from then on. stack is each thread's " ..
  "call stack in bytes for " ..
  "recursive and indirectly called functions (1024, cudaLimitStackSize's default; 16 to " ..
  "131072); going past it fails the launch with \"stack overflow\". block_order is the " ..
  "order a launch hands out its blocks in: \"forward\" (the default: block 0, 1, 2, ... by " ..
  "linear index), \"reverse\" (the last first) or \"shuffle\" (a permutation that seed, a " ..
  "whole number, decides: the same on every run). A GPU promises no order, so a kernel " ..
  "whose result changes with it (one block clears a total the others add to, one reads " ..
  "what a later block writes) is wrong even when the forward order gives the right " ..
  "answer. With threads = 1 blocks run, and device printf prints, in this order; the " ..
  "timing model's figures do not depend on it.",
  "old = cuda.simopts()\ncuda.simopts{model = false}\nprint(cuda.simopts().model)\n" ..
  "cuda.simopts{block_order = \"shuffle\", seed = 7}\n" ..
  "cuda.simopts(old)",
  "race_check, threads, model, stack, perf, block_order, seed")

def("cuda.perf_params",
  "cuda.perf_params -> {{name =, unit =, doc =, zero =, min =, max =}, ...}",
  "The timing model's parameters, as the simulator describes them: what cuda.simopts().perf " ..
  "holds and cuda.stats{perf = ...} and cuda.simopts{perf = ...} accept. Each is a positive " ..
  "number from min to max, or 0 where zero is true (an effect that may be absent). They are:",
  "for _, p in ipairs(cuda.perf_params) do print(p.name, p.unit) end").list = perf_lines

def("cuda.sanitize", "cuda.sanitize([{nan = true or \"made\", init =, sync =}]) -> table",
  "Turns on checks of the simulator's launches that follow. Each stops a launch at its " ..
  "first finding, with an error that names the thread, the block and the source line. " ..
  "nan = true: a store of a NaN or an infinity the kernel made, naming the f32 or f64 " ..
  "instruction that made it, with its operands (\"div.rn.f32 of 1.0 by 0.0 gave inf\"): " ..
  "made from finite numbers, made from a constant infinity by arithmetic (logf(-0.5f)), " ..
  "or a constant picked by a float test (logf(0.0f)); one that came in as input, a " ..
  "constant copied as it is (-INFINITY to start a maximum), and one made and dropped " ..
  "(tanhf(100.0f) on its way to 1.0) are not reported. nan = \"made\", the strict " ..
  "check: the first instruction that makes one, stored or not (\"This is the first NaN " ..
  "the kernel made\"), so isnan(v) ? 0.0f : v fails; the math library's internal " ..
  "infinities stop it too. init: a read of " ..
  "shared memory no thread of the block has written in this launch, or of an element of " ..
  "a cuda.empty array nothing has written since; and under init each block's shared " ..
  "memory and each thread's registers and local memory start as 0xcb bytes " ..
  "(-875836469 as an int, about -2.67e7 as a float) instead of zero, so an uninitialised " ..
  "local or an unzeroed accumulator gives a visibly wrong result; before the launch, " ..
  "init also names the line of a register the kernel reads that nothing assigned " ..
  "(float acc; acc += ...). sync: a " ..
  "__syncthreads() some threads of the block never reach, because they returned or " ..
  "took another path (what " ..
  "compute-sanitizer's synccheck finds on a GPU). A table sets exactly the checks it names " ..
  "to true (nan to \"made\" if it says so); cuda.sanitize{} turns them all off; " ..
  "cuda.sanitize() returns them. The checks " ..
  "slow launches down, nan the most: it looks at every instruction.",
  "cuda.use(\"sim\")\ncuda.sanitize{nan = true}\n" ..
  "k = cuda.kernel[[__global__ void inv(float *a) {\n" ..
  "  a[threadIdx.x] = 1.0f / a[threadIdx.x]; }]]\n" ..
  "print(pcall(k[{1, 4}], cuda.arange(4)))   -- 1/0 in thread 0\ncuda.sanitize{}",
  "nan, init, sync")

def("cuda.watch", "cuda.watch(a, i) -> Watch",
  "Watches element i (from 0) of device array a on the simulator: every write the " ..
  "kernels launched from then on make to a[i], in order, with the thread, the block, the " ..
  "source line and the value before and after. Atomics count too, named (atomicAdd). " ..
  "Print w for the list; w.writes holds the first 1000 as tables and w.count counts them " ..
  "all. w:clear() forgets them; w:close() or cuda.unwatch(w) stops watching and keeps " ..
  "what was seen. A watch costs a launch little: only a store near the element is looked at.",
  "cuda.use(\"sim\")\na = cuda.array(8)\nw = cuda.watch(a, 3)\n" ..
  "k = cuda.kernel[[__global__ void half(float *a) {\n" ..
  "  a[threadIdx.x / 2] = threadIdx.x; }]]\n" ..
  "k[{1, 8}](a)\nprint(w)   -- threads 6 and 7 both wrote a[3]\ncuda.unwatch(w)")

def("cuda.unwatch", "cuda.unwatch(w)",
  "Stops watch w, as w:close() does; the writes it saw stay in w.writes.",
  "w = cuda.watch(cuda.array(4), 0)\ncuda.unwatch(w)\nprint(w.watching)")

def("cuda.backend", "cuda.backend() -> string",
  "Names the backend in use: \"cuda\", \"sim\" or \"none\".",
  "print(cuda.backend())")

def("cpu", "cpu",
  "The cpu module: timing of code that runs on the CPU, to compare with the GPU.")

def("cpu.time", "cpu.time(fn [, {warmup = 2, reps = 20}]) -> TimeResult",
  "Like cuda.time, but timed with the CPU clock: use it for Lua loops and host work.",
  "h = cuda.host(100000)\n" ..
  "c = cpu.time(function() for i = 0, #h - 1 do h[i] = h[i] + 1 end end)\nprint(c)",
  "median, min, max, mean (in ms), reps, samples, unit, clock")

def("Array", "Array  (made by cuda.array, zeros, ones, full, arange, rand)",
  "Numbers in GPU memory, all of one dtype, indexed a[0] .. a[#a - 1] as in a kernel. " ..
  "Each a[i] copies one element across the bus, so move many at once with a:tolist(), " ..
  "a:host() or a:copyto().",
  "a = cuda.arange(5)\nprint(#a, a[0], a[4], a.dtype, a.nbytes)")

def("Array:tolist", "a:tolist() -> table",
  "Copies the array into a new Lua table. The table is indexed from 1, as Lua tables are.",
  "t = cuda.arange(5):tolist()   -- {0, 1, 2, 3, 4}")

def("Array:host", "a:host() -> HostBuffer",
  "Copies the array into a new host buffer.",
  "h = cuda.arange(5):host()\nprint(h[4])")

def("Array:copyto", "a:copyto(dst)",
  "Copies every element into dst. dst is an array, host buffer or Lua table of the same " ..
  "length.",
  "a = cuda.arange(1000)\nh = cuda.host(1000)\na:copyto(h)")

def("Array:copyfrom", "a:copyfrom(src)",
  "Copies every element from src. src is an array, host buffer or Lua table of the same " ..
  "length.",
  "a = cuda.array(3)\na:copyfrom({1, 2, 3})")

def("Array:fill", "a:fill(value)",
  "Sets every element to value.",
  "a = cuda.array(1000)\na:fill(7)")

def("Array:arange", "a:arange()",
  "Refills the array with 0, 1, 2, ... as cuda.arange makes a new one; on the GPU a kernel " ..
  "does it at device bandwidth.",
  "a = cuda.array(1000)\na:arange()\nprint(a[999])")

def("Array:rand", "a:rand([seed])",
  "Refills a float array with the numbers cuda.rand(#a, a.dtype, seed) would make: the same " ..
  "for the same seed, on every backend.",
  "a = cuda.array(1000)\na:rand(42)")

def("Array:tobytes", "a:tobytes() -> string",
  "The elements' raw bytes as a Lua string, in the array's dtype, little-endian as the " ..
  "device holds them: bit patterns such as NaN payloads and signed zeros survive, which " ..
  "a:tolist()'s numbers would not. string.unpack reads them.",
  "s = cuda.array({1, -0.0}, \"f32\"):tobytes()\nprint(#s, string.unpack(\"<f\", s, 5))")

def("Array:save", "a:save(path [, {format = \"npy\" | \"csv\", shape = {...}}]) -> a",
  "Writes the array to a file, for NumPy, a spreadsheet or a plotting tool: .npy (NumPy's " ..
  "format 1.0, little-endian, C order: np.load reads it) or .csv (one row per line), as the " ..
  "extension or format says. shape = {rows, columns} (any sizes whose product is #a) writes " ..
  "that shape; a CSV then has a row per line. bf16, which NumPy lacks, is saved as float32, " ..
  "which holds it exactly. The file is replaced only once the new one is complete: a save " ..
  "that fails leaves the old file as it was.",
  "dir = os.tmpname()   -- a name for files of your own\na = cuda.arange(6)\n" ..
  "a:save(dir .. \".npy\")\na:save(dir .. \".csv\", {shape = {2, 3}})")

def("Array:free", "a:free()",
  "Releases the memory now. Otherwise the garbage collector frees it some time after the " ..
  "last use; using the array after a:free() is an error. A variable declared <close> is " ..
  "freed at the end of its block.",
  "do\n  local a <close> = cuda.array(1000000)\n  a:fill(1)\nend   -- freed here")

def("Array.dtype", "a.dtype -> string",
  "The element type: {dtypes} (cuda.dtypes describes each). f16 and bf16 hold what __half " ..
  "and __nv_bfloat16 hold: numbers stored there round to nearest even and read back exactly.",
  "print(cuda.array(4, \"i32\").dtype)")

def("Array.nbytes", "a.nbytes -> integer",
  "The size of the data in bytes: #a times the size of one element.",
  "print(cuda.array(1000).nbytes)   -- 4000")

def("HostBuffer", "HostBuffer  (made by cuda.host and a:host())",
  "Numbers in CPU memory with the same interface as an Array: h[i], #h, h.dtype, " ..
  "h:tolist(), h:copyto(a) and so on. h.pinned tells whether it is page-locked, " ..
  "which makes copies to and from the GPU faster.",
  "h = cuda.host({1, 2, 3}, \"f64\", {pinned = true})\nprint(h.pinned, h[0])")

def("Stream", "Stream  (made by cuda.stream)",
  "A queue of GPU work. Copies (cuda.copy with stream = s) and launches " ..
  "(k[{grid, block, stream = s}]) on it run in order; work on other streams may run at the " ..
  "same time. s.id is its number in timelines; s:free() or <close> releases it.",
  "s = cuda.stream()\nprint(s.id)\ns:sync()")

def("Stream:sync", "s:sync() -> s",
  "Waits until all work queued on the stream has finished.",
  "s = cuda.stream()\ns:sync()")

def("Stream:free", "s:free()",
  "Releases the stream now, rather than when the garbage collector comes; using it after " ..
  "is an error. A stream declared <close> is freed at the end of its block.",
  "do\n  local s <close> = cuda.stream()\n  s:sync()\nend   -- freed here")

def("Stream:wait", "s:wait(ev) -> s",
  "Work queued on s from now on starts only after the event ev has happened. The host does " ..
  "not wait: this orders work between streams.",
  "a, b = cuda.stream(), cuda.stream()\nev = cuda.event(a)\nb:wait(ev)")

def("Event", "Event  (made by cuda.event)",
  "A point in a stream's work: it happens when the work queued before it is done. " ..
  "ev:record([s]) records it again, ev:elapsed(ev2) times the work between two.",
  "s = cuda.stream()\nev = cuda.event(s)\nprint(ev)")

def("Event:record", "ev:record([stream]) -> ev",
  "Records the event again, on the stream (the default stream without one).",
  "ev = cuda.event()\nev:record()")

def("Event:free", "ev:free()",
  "Releases the event now, rather than when the garbage collector comes.",
  "ev = cuda.event()\nev:free()")

def("Event:elapsed", "ev:elapsed(ev2) -> ms",
  "The milliseconds from ev to ev2, once ev2 has happened (on the simulator, modelled H200 time).",
  "a = cuda.event()\nb = cuda.event()\nprint(a:elapsed(b))")

def("Timeline", "Timeline  (made by cuda.timeline)",
  "What ran while a function ran: tl.ops lists every copy and kernel with its stream, kind, " ..
  "dir, bytes, pinned, name, start and stop (ms); tl.streams groups them by stream; tl.total " ..
  "is when the last ended. print(tl) draws one row per stream; cuda.plot(tl, \"f.svg\") saves it.",
  "a, h = cuda.array(1000), cuda.host(1000)\ntl = cuda.timeline(function() a:copyfrom(h) end)\n" ..
  "print(tl.total)")

def("Watch", "Watch  (made by cuda.watch)",
  "The writes kernels made to one watched array element, oldest first. Print it for the " ..
  "list; each of w.writes is a table.",
  "w = cuda.watch(cuda.array(4), 0)\nprint(w.count, #w.writes, w.watching)\nw:close()",
  "writes {thread {x, y, z}, block {x, y, z}, line, where, kernel, op, old, new}, count, " ..
  "index, dtype, label, array, watching")

def("Watch:clear", "w:clear() -> w",
  "Forgets the writes seen so far; w.count starts again from 0.",
  "w = cuda.watch(cuda.array(4), 0)\nw:clear()")

def("Watch:close", "w:close()",
  "Stops watching; the writes seen stay in w.writes. cuda.unwatch(w) does the same.",
  "w = cuda.watch(cuda.array(4), 0)\nw:close()\nprint(w.watching)")

def("Kernel", "Kernel  (made by cuda.kernel, or a field of a Module)",
  "A compiled __global__ function. Launch it with k[{grid, block}](args...): grid " ..
  "blocks of block threads each, both numbers or {x, y, z}.",
  INC .. "print(inc.name)\nprint(inc:info())")

def("Kernel:launch", "k[{grid, block [, shared = bytes, cooperative = true]}](args...)",
  "Starts grid x block threads. Arrays are passed as pointers and numbers as the " ..
  "parameter's C type. An array's dtype must fit its pointer: the same type, or an integer " ..
  "type of the same width and either sign (i64 for unsigned long long *). nil passes NULL; " ..
  "a:view(offset, count) or a + offset passes part of an array. A pointer to pointers " ..
  "(float **) takes an array of device addresses (cuda.ptrs). A struct taken by value is a " ..
  "table of its fields by name, laid out from its definition in the kernel's source (or a " ..
  "string of exactly its bytes, from string.pack, for a struct the source does not define); " ..
  "a vector type (float2, int4, double2, uchar4 ...) is {x = , y = } or {1, 2}. A missing, " ..
  "extra or mistyped field is an error that names it. The call returns before the kernel " ..
  "ends (see cuda.sync); shared sets the dynamic shared memory per block in bytes. " ..
  "cooperative = true makes a cooperative launch (cudaLaunchCooperativeKernel), whose " ..
  "blocks are all resident at once, which a kernel that calls cg::this_grid().sync() needs: " ..
  "a grid larger than the device holds at once (SMs x k:occupancy(block)) is refused with " ..
  "the numbers.",
  INC .. "a = cuda.zeros(1000)\ninc[{(#a + 255) // 256, 256}](a, #a)\nprint(a[0])\n" ..
  "k = cuda.kernel[[struct P { float s; int n; float *x; };\n" ..
  "__global__ void k(P p, float2 v) {\n" ..
  "  int i = threadIdx.x; if (i < p.n) p.x[i] *= p.s + v.y; }]]\n" ..
  "k[{1, 32}]({s = 2, n = 10, x = a}, {x = 0, y = 1})\nprint(a[0])")

def("Array:view", "a:view(offset [, count]) -> Array",
  "Elements offset .. offset + count - 1 of a (to its end without count) as an array of " ..
  "their own that shares a's memory, as C's a + offset: a kernel given it sees element " ..
  "offset as its element 0. a + offset is a:view(offset). Freeing a frees its views. On the " ..
  "simulator an access past a view's end is reported against the view, unless the whole " ..
  "array is an argument of the same launch too.",
  INC .. "a = cuda.zeros(1000)\ninc[{1, 256}](a:view(256, 256), 256)\n" ..
  "inc[{1, 256}](a + 512, 256)\nprint(a[255], a[256], a[600])")

def("Array:ptr", "a:ptr() -> integer",
  "The array's device address (a view's, for a view), to store in a u64 array that a " ..
  "kernel reads as pointers (float **). The array must stay alive while a kernel uses the " ..
  "address: cuda.ptrs keeps its arrays alive for you. On the simulator, every address a " ..
  "kernel reads this way is still checked against its array.",
  "a, b = cuda.zeros(4), cuda.zeros(8)\np = cuda.array({a:ptr(), b:ptr()}, \"u64\")")

def("cuda.managed", "cuda.managed(n | table | array [, dtype]) -> Array",
  "A device array in managed (unified) memory, which the host and kernels both address: " ..
  "cudaMallocManaged. Use it wherever an array goes; reading or writing it from Lua touches " ..
  "its memory in place, with no copy. It starts on the host; pages move to the GPU when a " ..
  "kernel first touches them (a page fault: the kernel waits while the driver moves 64 KiB " ..
  "groups, one batch of faults per 2 MiB) and back when the host touches them again. " ..
  "a:prefetch(\"gpu\") moves them ahead, at copy speed and without faults; a:advise gives " ..
  "hints. On the simulator cuda.stats().managed counts the faults and bytes moved, " ..
  "a:residency() says where the pages are, and the times use estimated figures (named in " ..
  "cuda.perf_params), not measured ones. dtype is {dtypes}; f32 if left out.",
  INC .. "m = cuda.managed(1 << 20)\ninc[{4096, 256}](m, #m)   -- faults the pages over\n" ..
  "print(m[0])                   -- the host reads in place\nm:prefetch(\"gpu\")")

def("Array:prefetch", "a:prefetch(\"gpu\" | \"cpu\" [, stream]) -> a",
  "Moves a managed array's pages to the GPU or the host ahead of use (cudaMemPrefetchAsync), " ..
  "queued on the stream (the default one without), so that a kernel or the host finds them " ..
  "there instead of faulting them over a group at a time. Only for cuda.managed arrays.",
  INC .. "m = cuda.managed(1 << 20)\nm:prefetch(\"gpu\")\ninc[{4096, 256}](m, #m)")

def("Array:advise", "a:advise(\"read_mostly\" | \"preferred\" [, value]) -> a",
  "Advice to the driver on a managed array (cudaMemAdvise): a:advise(\"read_mostly\" [, " ..
  "false]) or a:advise(\"preferred\", \"gpu\" | \"cpu\" | false). read_mostly: a kernel's reads " ..
  "copy the pages to the GPU and the host keeps its own copy, so neither side faults on a " ..
  "read (a write drops the other copies). preferred: where the pages stay; on the CPU, " ..
  "kernels read them in place over the link instead of moving them. false takes the advice " ..
  "back.",
  "m = cuda.managed(1000)\nm:advise(\"read_mostly\")\nm:advise(\"preferred\", \"cpu\")")

def("Array:residency", "a:residency() -> {cpu =, gpu =, both =, group =, bytes =}",
  "Where a managed array's pages are, on the simulator: how many groups of `group` bytes " ..
  "(64 KiB) are on the host, on the GPU, and on both (read-mostly copies). A GPU does not " ..
  "say this page by page; Nsight Systems shows its migrations.",
  "m = cuda.managed(1 << 20)\nm:prefetch(\"gpu\")\npp(m:residency())")

def("cuda.graph", "cuda.graph(fn) -> Graph",
  "Captures the kernel launches fn makes into a CUDA graph, without running them (stream " ..
  "capture: cudaStreamBeginCapture, cudaStreamEndCapture, cudaGraphInstantiate), and returns " ..
  "it; g() or g:launch() replays them all in one submission (cudaGraphLaunch), which costs " ..
  "less per kernel than launching each (on the simulator: graph_node_us per kernel, after one " ..
  "graph_launch_us, in place of launch_us; both graph figures are estimates). A graph holds " ..
  "launches only: reading an array on the host, cuda.sync, copies, making arrays and cuda.time " ..
  "inside fn are refused, naming what was refused. The graph keeps its arrays and kernels " ..
  "alive; g.launches counts its kernels; g:free() frees it.",
  INC .. "x = cuda.zeros(256)\ng = cuda.graph(function()\n" ..
  "  for i = 1, 100 do inc[{1, 256}](x, 256) end\nend)\ng()\nprint(x[0], g.launches)")

def("cuda.texture", "cuda.texture(array [, {width =, height =, filter =, ...}]) -> Texture",
  "A texture object (cudaCreateTextureObject) holding a copy of the device array, for a " ..
  "kernel parameter of type cudaTextureObject_t, read with tex1D, tex2D or tex3D (tex1Dfetch " ..
  "reads linear memory, not this texture's CUDA array: read texel i with tex1D(t, i + 0.5f)); " ..
  "its options are width, height, depth, channels, filter, address, normalized and read. " ..
  "width is the array's length for 1-D; height (2-D) and depth (3-D) make it more: width * " ..
  "height * depth * channels must be the array's length. channels: 1, 2 or 4 (float2, " ..
  "float4). filter: \"point\" (the texel at floor(x)) or \"linear\" (interpolated, with the " ..
  "GPU's 8-bit weights). address: \"clamp\", \"wrap\", \"mirror\" or \"border\" (reads 0), " ..
  "or a table with one per dimension; wrap and mirror act on normalized coordinates only. " ..
  "normalized: coordinates in [0, 1) rather than texels. read: \"element\" or \"normalized\" " ..
  "(u8, i8, u16, i16 read as floats in [0, 1] or [-1, 1]). Arrays of f32, i32, u32, i16, u16, " ..
  "i8 or u8; linear filtering needs float results. Writing the array afterwards changes " ..
  "nothing the texture reads. t:free() (or <close>) frees it; a freed texture is refused.",
  "a = cuda.array{1, 2, 3, 4, 5, 6}\n" ..
  "t = cuda.texture(a, {width = 3, height = 2, filter = \"linear\"})\n" ..
  "k = cuda.kernel[[\n__global__ void k(cudaTextureObject_t t, float *o) {\n" ..
  "  o[0] = tex2D<float>(t, 1.0f, 1.0f);\n}]]\n" ..
  "o = cuda.zeros(1)\nk[{1, 1}](t, o)\nprint(o[0])   -- 3, the mean of 1, 2, 4 and 5")

def("Texture", "Texture  (made by cuda.texture)",
  "A texture object: pass it to a cudaTextureObject_t parameter. t.width, t.height, t.depth, " ..
  "t.dims, t.channels, t.dtype, t.filter, t.address (one per dimension), t.normalized, t.read " ..
  "say how it was made; t.freed whether t:free() has run.",
  "t = cuda.texture(cuda.array{1, 2, 3})\nprint(t, t.width)")

def("Texture:free", "t:free()",
  "Frees the texture (and its copy of the array) now; freeing again does nothing, and a " ..
  "launch given a freed texture is refused. A texture declared <close> is freed at the end " ..
  "of its block.",
  "do\n  local t <close> = cuda.texture(cuda.array{1, 2})\nend   -- freed here")

def("Graph", "Graph  (made by cuda.graph)",
  "Kernel launches captured by cuda.graph, replayed together: g() or g:launch(). " ..
  "g.launches is how many kernels it holds; g.freed says whether g:free() has run.",
  INC .. "x = cuda.zeros(256)\ng = cuda.graph(function() inc[{1, 256}](x, 256) end)\n" ..
  "g()\nprint(g)")

def("Graph:launch", "g:launch() -> g   (or g())",
  "Replays the graph's launches on the default stream, in the order they were captured.",
  INC .. "x = cuda.zeros(256)\ng = cuda.graph(function() inc[{1, 256}](x, 256) end)\n" ..
  "g:launch()\nprint(x[0])")

def("Graph:free", "g:free()",
  "Frees the graph now, and lets go of the arrays and kernels it kept alive; a freed graph " ..
  "refuses to launch.",
  INC .. "x = cuda.zeros(256)\ng = cuda.graph(function() inc[{1, 256}](x, 256) end)\n" ..
  "g:free()")

def("cuda.ptrs", "cuda.ptrs({a, b, ...}) -> Array",
  "A u64 array of the arrays' device addresses (false for NULL), for a kernel that takes a " ..
  "pointer to pointers (float **rows): it keeps the arrays alive as long as it lives.",
  "rows = {cuda.ones(3), cuda.ones(5)}\np = cuda.ptrs(rows)\nprint(p)")

def("Kernel:ptx", "k:ptx() -> string",
  "The PTX that NVRTC produced. PTX is the GPU's portable assembly language, before it " ..
  "becomes machine code for one architecture.",
  INC .. "print(inc:ptx())")

def("Kernel:info", "k:info() -> KernelInfo",
  "The resources the kernel uses. Per thread: registers and local memory; per " ..
  "block: static shared memory; and the largest block it can be launched with. " ..
  "spill_bytes and spill_load_bytes are ptxas's count of the bytes its spill stores and " ..
  "loads move between registers and local memory (each instruction once, as ptxas -v " ..
  "reports them): 0 when the registers held every value; more when a register limit " ..
  "(__launch_bounds__, -maxrregcount) was met by spilling, which cuda.occupancy's " ..
  "explanation then names.",
  INC .. "print(inc:info())\nprint(inc:info().registers, inc:info().spill_bytes)",
  "name, registers, shared_static, local_bytes, spill_bytes, spill_load_bytes, const_bytes, " ..
  "max_threads_per_block, arch, params")

def("Kernel:debug", "k:debug{grid, block [, shared = bytes] [, commands = {lines}]}(args...)",
  "Launches the kernel on the simulator under a debugger, with a prompt of its own, " ..
  "(cuda-debug), before the first instruction: break LINE [if COND] stops where a thread " ..
  "reaches a line of the source (COND is C, such as threadIdx.x == 5 && i > 100), " ..
  "continue runs to the next stop, step runs the warp in focus to its next line, print " ..
  "NAME shows a variable by its name in the source (print NAME @warp, for every lane), " ..
  "thread and block move the focus, where shows which lanes of each warp are at which " ..
  "line, list shows the source, quit abandons the launch, help lists the rest (bt, up, " ..
  "down, finish, next, until, tbreak, break FUNCTION, info locals, display, x/8f p). A launch " ..
  "that fails (out of bounds, a cuda.sanitize check, never finishing) stops at the prompt " ..
  "on the thread at fault, with the message, before it ends with the error. The results " ..
  "are those of an ordinary launch. The kernel is compiled again with -G for its " ..
  "variables' names; on the GPU the launch runs on the simulator all the same. commands = " ..
  "{\"break 6\", \"continue\", \"print i\"} gives the prompt those lines instead of the " ..
  "console's, each shown as typed; their end quits, as the end of input does.",
  INC .. "a = cuda.zeros(256)\ninc:debug{1, 256}(a, #a)\n" ..
  "-- at (cuda-debug): break 2, continue, print i, where, continue\nprint(a[0])")

def("Kernel:occupancy", "k:occupancy(threads [, shared]) -> blocks | nil",
  "How many blocks of threads threads (with shared bytes of dynamic shared memory each) fit " ..
  "on one SM at once, as the CUDA runtime works it out " ..
  "(cudaOccupancyMaxActiveBlocksPerMultiprocessor); nil on the simulator and without a GPU, " ..
  "where there is no runtime to ask. cuda.occupancy(k, block) works on every backend and " ..
  "shows why: it computes the same figure from k:info() and the device, and on the GPU " ..
  "reports this one beside it.",
  INC .. "print(inc:occupancy(256))   -- 8 on an H200; nil off the GPU\n" ..
  "print(cuda.occupancy(inc, 256).blocks_per_sm)")

ENTRIES["Kernel:launch"].short = "k[{grid, block}](...)"

def("Kernel.name", "k.name -> string",
  "The kernel's name as written in the source.",
  INC .. "print(inc.name)")

def("Kernel.entry", "k.entry -> string",
  "The kernel's name in its PTX (the .entry of k:ptx(), which holds every kernel of its " ..
  "module): mangled for C++, _Z3incPfi for inc(float *, int).",
  INC .. "print(inc.entry)")

def("Module", "Module  (made by cuda.module)",
  "Several kernels compiled together; each is a field named as in the source: m.name.",
  "m = cuda.module[[__global__ void one(float *a) { a[0] = 1; }]]\nprint(m.one)")

def("Module:constant", "m:constant(name [, values])",
  "Sets or reads a __constant__ or __device__ variable of the module, as " ..
  "cudaMemcpyToSymbol does: values is a table of numbers or a cuda.Array of the type " ..
  "the source declares (a shorter one sets the first elements); without values it " ..
  "returns the variable's elements as a table. A variable of a CUDA vector type (float4, " ..
  "int2, double2, ...) is the table of its components, {x, y, z, w} or {x = , y = , ...}, and " ..
  "an array of them a table of such tables; each reads back in that shape, and a cuda.Array " ..
  "for one holds its components (f32 for float4). A variable whose type is no element type " ..
  "(a struct, a pointer, a type a macro names) reads back as bytes and is set from a " ..
  "cuda.Array of any type. The name is the " ..
  "source's, \"ns::name\" in a namespace. Too many values, another type, or a name " ..
  "with no variable is an error that says so. k:constant does the same for a kernel's module.",
  "m = cuda.module[[__constant__ float w[3];\n" ..
  "__global__ void scale(float *a) { a[threadIdx.x] *= w[threadIdx.x]; }]]\n" ..
  "m:constant(\"w\", {1, 2, 3})\nprint(m:constant(\"w\")[2])")

def("Kernel:constant", "k:constant(name [, values])",
  "m:constant for the module of the kernel: sets or reads its __constant__ or __device__ " ..
  "variable name.",
  "k = cuda.kernel[[__constant__ int n;\n__global__ void get(int *a) { a[0] = n; }]]\n" ..
  "k:constant(\"n\", {7})\nprint(k:constant(\"n\")[1])")

def("Module:variables", "m:variables([{contents = true}]) -> table",
  "The module-scope __constant__, __device__ and __managed__ variables its source declares, " ..
  "in order, read as m:constant reads them: {name, space, type, array, size, dtype, vector} " ..
  "each (dtype, the element or component type, when the values are numbers; vector, the " ..
  "components of a vector type; size, absent when the compiler left the variable out). " ..
  "Comments, strings, macros' text and variables inside functions are never listed; one in a " ..
  "namespace is named with it, \"ns::coef\". With contents, each one's bytes as a string. " ..
  "k:variables does the same for a kernel's module.",
  "m = cuda.module[[__constant__ float4 tint;\nnamespace ns { __device__ int n[2]; }\n" ..
  "__global__ void k(float *a) { a[0] = tint.x + ns::n[1]; }]]\n" ..
  "for _, v in ipairs(m:variables()) do print(v.space, v.name, v.size) end")

def("Kernel:variables", "k:variables([{contents = true}]) -> table",
  "m:variables for the module of the kernel: the variables its source declares.",
  "k = cuda.kernel[[__constant__ int n;\n__global__ void get(int *a) { a[0] = n; }]]\n" ..
  "print(k:variables()[1].name)")

def("Module:kernels", "m:kernels() -> table",
  "The names of the module's kernels, those of the files the source #includes too.",
  "m = cuda.module[[__global__ void one(float *a) { a[0] = 1; }]]\n" ..
  "for _, name in ipairs(m:kernels()) do print(name) end")

def("Module:set_aside", "m:set_aside() -> table",
  "What cuda.module(file, {device_only = true}) left out of the compile: a list of " ..
  "{first, last, what}, the lines and \"function main\" or \"variable d_Buf\"; empty " ..
  "for a module loaded otherwise.",
  "m = cuda.module([[\n__global__ void one(float *a) { a[0] = 1; }\nint main() { return 0; }]], " ..
  "{device_only = true})\nfor _, s in ipairs(m:set_aside()) do print(s.first, s.what) end")

def("Module:ptx", "m:ptx() -> string",
  "The PTX of the whole module.",
  "m = cuda.module[[__global__ void one(float *a) { a[0] = 1; }]]\nprint(m:ptx())")

def("help", "help([value | name])",
  "Explains a function, type or module; with no argument, gives an overview. " ..
  "A short name works too: help \"time\" shows cuda.time and cpu.time.",
  "help(cuda.array)\nhelp \"Array\"\nhelp \"time\"")

def("class", "cudalab --class DIR",
  "Classroom mode. A learner joins a class with cudalab --class DIR (or CUDALAB_CLASS=DIR): " ..
  "lessons() then lists the class's lessons, the class's limits hold (cuda.limits), and each " ..
  "check(), hint() and skip() is recorded in the class folder under your own account, and " ..
  "grades() shows the results the instructor published for you. " ..
  "The instructor makes a class with cudalab --class-init DIR [--group G], sees the room with " ..
  "cudalab --class-report DIR [--watch [SECONDS]] [--html FILE] (learners by lessons: passed, " ..
  "attempts, skipped, stuck; per task the pass rate, median attempts and most frequent " ..
  "failures), and grades with cudalab --grade DIR [-j N] [--csv F] [--json F] [--slurm --wait], " ..
  "which re-runs every learner's recorded work; cudalab --class-snapshot DIR, run at each " ..
  "due time, keeps the passes as they are then, so that a pass dated before the due time in " ..
  "a record rewritten later is graded as late. cudalab --help lists the options.",
  "print(cuda.limits().memory)")

def("grades", "grades()",
  "In a class (cudalab --class DIR): prints the results the instructor published for you " ..
  "with cudalab --grade DIR --publish: your score, and each task's points and the grader's " ..
  "output (why it passed or failed, partial credit, lateness, an override's reason). The " ..
  "results are yours alone: the file is readable by you and the instructor only. Before " ..
  "any are published it says so.",
  "if grades then grades() end -- defined in a class session only")

def("pp", "pp(value, ...)",
  "Prints values the way the prompt does: tables in Lua syntax, summarised when " ..
  "they are long or deep.",
  "pp({1, 2, {x = 3}})")

local OVERVIEW = [[
cudalab: a Lua prompt for learning CUDA.

  Lessons    lessons() lists them; lesson(1) starts the first.
  Device     cuda.device()  cuda.meminfo()  cuda.sync()  cuda.limits()
  Arrays     cuda.array  zeros  ones  full  arange  rand  empty  host  dtypes
  Files      a:save("x.npy" | "x.csv")  cuda.load(path)
  Unified    cuda.managed(n); a:prefetch("gpu")  a:advise  a:residency()
  Kernels    k = cuda.kernel(source);  k[{grid, block}](args...);  cuda.module
  Args       {field = v} for a struct, nil for NULL, a + i, a:view, cuda.ptrs
  Textures   t = cuda.texture(a, {width =, height =, filter =, address =})
  Debug      k:debug{grid, block}(args...): break, step, print, where
  Measure    cuda.time(fn)  cpu.time(fn)  cuda.compare(x, y)
  Streams    cuda.stream()  cuda.event(s)  cuda.copy  cuda.timeline(fn)
  Graphs     g = cuda.graph(fn) captures launches; g() replays them
  Explore    cuda.sweep  versus  occupancy  roofline  plot  stats  launches
  Program    cuda.record(true), then cuda.export("prog.cu"): CUDA C++
  Debug      cuda.sanitize{nan =, init =, sync =}  cuda.watch(a, i)  unwatch
  More       cuda.blas  cache  simopts  perf_params  use  backend  version
  Print      pp(value), or type an expression: its value is printed
  Class      cudalab --class DIR joins one; cuda.gpu_admit; help "class"

help(cuda.array) or help "cuda.array" explains one function,
help "Array" lists what an array can do.
Tab completes names.  Ctrl-C stops a running loop or wait;
Ctrl-D on an empty line quits.]]

-- Which entry a value's metatable points to: results of cuda.* calls are
-- plain tables with a metatable from cuda._meta; C types carry a __name.
local META_ENTRY = {
  Device = "cuda.device", TimeResult = "cuda.time", CompareResult = "cuda.compare",
  MemInfo = "cuda.meminfo", KernelInfo = "Kernel:info", Stats = "cuda.stats",
}
local TYPES = { "Array", "HostBuffer", "Kernel", "Module", "Stream", "Event", "Watch", "Graph",
  "Texture" }

---------------------------------------------------------------- rendering --

-- Wraps words to the width. The first line starts with `first` (default:
-- indent), the others with `indent`, which gives hanging indents in lists.
local function wrap(text, indent, first)
  first = first or indent
  local lines, line, start = {}, first, #first
  for word in text:gmatch("%S+") do
    if #line > start and #line + 1 + #word > WIDTH then
      lines[#lines + 1], line, start = line, indent, #indent
    end
    line = line .. (#line > start and " " or "") .. word
  end
  lines[#lines + 1] = line
  return table.concat(lines, "\n")
end

-- How a member is written in lists: the signature up to its arguments
-- ("a:tolist", "cuda.array"), unless the entry says otherwise.
local function short(e)
  return e.short or e.sig:match("^[^%(%s]+")
end

-- The element types' names from the C side ("f32, f64, ... or u64"), for {dtypes} in
-- entries' text: written down nowhere else, so a new type needs no edit here.
local function dtype_names()
  local cuda = rawget(_G, "cuda")
  local list = type(cuda) == "table" and rawget(cuda, "dtypes")
  if type(list) ~= "table" or #list == 0 then return "one of the names in cuda.dtypes" end
  local names = {}
  for i, d in ipairs(list) do names[i] = d.name end
  if #names == 1 then return names[1] end
  return table.concat(names, ", ", 1, #names - 1) .. " or " .. names[#names]
end

-- An entry's text with the facts it names filled in.
local function expand(text)
  return (text:gsub("{dtypes}", dtype_names))
end

-- The first sentence of text: the summary shown in lists.
local function brief(text)
  return text:match("^(.-%.)%s") or text
end

-- The names of the members of a group ("Array" -> Array:tolist, Array.dtype...).
local function members(group)
  local out = {}
  for _, name in ipairs(ORDER) do
    local g = name:match("^([%w_]+)[%.:]")
    if g == group then out[#out + 1] = name end
  end
  return out
end

-- One entry in full: signature, text, fields, example; for a module or type,
-- followed by a one-line summary of each member.
local function render_entry(e)
  local out = { e.sig, wrap(expand(e.text), "  ") }
  if e.fields then out[#out + 1] = wrap("fields: " .. e.fields, "  ") end
  for _, line in ipairs(e.list and e.list() or {}) do
    out[#out + 1] = wrap(line, "      ", "    ")
  end
  if e.example then
    out[#out + 1] = "  example:"
    out[#out + 1] = "    " .. e.example:gsub("\n", "\n    ")
  end
  local list, w = members(e.name), 0
  for _, m in ipairs(list) do w = math.max(w, #short(ENTRIES[m])) end
  if #list > 0 then
    out[#out + 1] = ""
    for _, m in ipairs(list) do
      local lead = string.format("  %-" .. w .. "s  ", short(ENTRIES[m]))
      out[#out + 1] = wrap(brief(expand(ENTRIES[m].text)), (" "):rep(#lead), lead)
    end
    out[#out + 1] = string.format('help "%s" explains one of them.', list[1])
  end
  return table.concat(out, "\n")
end

--------------------------------------------------------------- looking up --

-- The metatable of a C type: from cuda._meta if C put it there, else from the
-- registry where luaL_newmetatable keeps it. nil when neither is reachable.
local function type_metatable(cuda, tname)
  local metas = type(cuda) == "table" and rawget(cuda, "_meta")
  local mt = type(metas) == "table" and rawget(metas, tname)
  if type(mt) == "table" then return mt end
  local reg = debug and debug.getregistry and debug.getregistry()
  mt = type(reg) == "table" and rawget(reg, "cudalab." .. tname)
  return type(mt) == "table" and mt or nil
end

-- Adds prefix..name for every function field of table t not yet mapped.
local function map_functions(map, t, prefix)
  if type(t) ~= "table" then return end
  for k, v in next, t do
    if type(v) == "function" and type(k) == "string" and not k:match("^__") and not map[v] then
      map[v] = prefix .. k
    end
  end
end

-- Function value -> documented name, built fresh from the live modules.
local function reverse_map()
  local map = {}
  local cuda = rawget(_G, "cuda")
  map_functions(map, cuda, "cuda.")
  map_functions(map, rawget(_G, "cpu"), "cpu.")
  -- the functions of cuda's tables: cuda.blas.gemm, cuda.cache.clear, cuda.roofline.peaks
  for k, v in next, type(cuda) == "table" and cuda or {} do
    if type(k) == "string" and k:sub(1, 1) ~= "_" and type(v) == "table" then
      map_functions(map, v, "cuda." .. k .. ".")
    end
  end
  for _, tname in ipairs(TYPES) do
    local mt = type_metatable(cuda, tname)
    if mt then
      map_functions(map, rawget(mt, "__index"), tname .. ":")
      map_functions(map, rawget(mt, "__methods"), tname .. ":")
      map_functions(map, mt, tname .. ":")
    end
  end
  for name, e in pairs(ENTRIES) do
    if e.fn and not map[e.fn] then map[e.fn] = name end
  end
  for _, g in ipairs({ "help", "pp", "grades" }) do
    local f = rawget(_G, g)
    if f ~= nil and not map[f] then map[f] = g end
  end
  return map
end

-- The entry for a documented name; HostBuffer methods share Array's text, and
-- a function of one of cuda's tables (cuda.blas.gemm) that has no entry of its
-- own is documented by its table's entry when that entry's signature shows it.
local function entry(name)
  if ENTRIES[name] then return ENTRIES[name] end
  local method = name:match("^HostBuffer([%.:][%w_]+)$")
  if method then return ENTRIES["Array" .. method] end
  local owner = name:match("^(cuda%.[%w_]+)%.[%w_]+$")
  local e = owner and ENTRIES[owner]
  if e and e.sig:find(name, 1, true) then return e end
  return nil
end

-- The base library's functions, by name (not every global: the learner's
-- own functions live there too).
local BASE = {}
for name in ([[assert collectgarbage dofile error getmetatable ipairs load loadfile next
  pairs pcall print rawequal rawget rawlen rawset require select setmetatable tonumber
  tostring type warn xpcall]]):gmatch("%a+") do BASE[name] = true end

-- Where a standard Lua function is documented: "string.format" and the like.
local function stdlib_name(f)
  for _, lib in ipairs({ "string", "table", "math", "io", "os", "coroutine", "utf8", "debug" }) do
    local t = rawget(_G, lib)
    if type(t) == "table" then
      for k, v in next, t do
        if v == f then return lib .. "." .. k end
      end
    end
  end
  for name in pairs(BASE) do
    if rawget(_G, name) == f then return name end
  end
  return nil
end

local MANUAL = "https://www.lua.org/manual/5.4/manual.html#pdf-"

-- The entry name for a value's type: a documented result table or C object.
local function name_for_type(v)
  local mt = getmetatable(v)
  if type(mt) ~= "table" then return nil end
  local cuda = rawget(_G, "cuda")
  local metas = type(cuda) == "table" and rawget(cuda, "_meta")
  for key, name in pairs(META_ENTRY) do
    if type(metas) == "table" and rawget(metas, key) == mt then return name end
  end
  local tname = rawget(mt, "__name")
  tname = type(tname) == "string" and tname:match("^cudalab%.(%w+)$")
  return tname and ENTRIES[tname] and tname or nil
end

-- Entries whose name, or whose last part, matches s: "time" finds cuda.time
-- and cpu.time. Case matters only when it decides: "array" finds cuda.array
-- (not the type Array), "ARRAY" finds both.
local function search(s)
  local exact, loose, lower = {}, {}, s:lower()
  for _, name in ipairs(ORDER) do
    local last = name:match("[%.:]([%w_]+)$") or name
    if name == s or last == s then exact[#exact + 1] = name end
    if name:lower() == lower or last:lower() == lower then loose[#loose + 1] = name end
  end
  return #exact > 0 and exact or loose
end

-- Normalises what a learner might type: "cuda.array()" -> "cuda.array",
-- "Array.tolist" -> "Array:tolist", "a:tolist" -> "Array:tolist" when the
-- global a is an array. Returns a list of entry names (maybe empty).
local function resolve_name(s)
  s = s:match("^%s*(.-)%s*$"):gsub("%b()$", ""):gsub("%($", "")
  if entry(s) then return { s } end
  local owner, sep, member = s:match("^([%w_]+)([%.:])([%w_]+)$")
  if owner then
    local other = owner .. (sep == "." and ":" or ".") .. member
    if entry(other) then return { other } end
    local tname = name_for_type(rawget(_G, owner))
    if tname then
      for _, sep2 in ipairs({ ":", "." }) do
        if entry(tname .. sep2 .. member) then return { tname .. sep2 .. member } end
      end
    end
  end
  local found = search(s)
  if #found == 0 and s:match("^[%a_][%w_]*$") then
    local v = rawget(_G, s)
    local name = v ~= nil and name_for_type(v)
    if name then found = { name } end
  end
  return found
end

-- Text for one or more entry names; several are shown one after another.
local function render_names(names)
  local parts = {}
  for i, name in ipairs(names) do
    local e = entry(name)
    parts[i] = render_entry(e)
    if e.name ~= name then
      local how = name:sub(1, #e.name + 1) == e.name .. "." and " is described under "
        or " works as "
      parts[i] = name .. how .. e.name .. ":\n" .. parts[i]
    end
  end
  return table.concat(parts, "\n\n")
end

local NOT_FOUND = "Try help() for an overview, or press Tab to see the names there are."

-- Help for a function value: ours, a standard Lua one, or the learner's own.
local function function_help(f)
  local name = reverse_map()[f]
  if name and entry(name) then return render_names({ name }) end
  if name then
    local group = name:match("^([%w_]+)") or name
    return string.format('%s has no help entry yet. help "%s" lists what is documented.',
      name, group)
  end
  local std = stdlib_name(f)
  if std then
    return std .. " is part of standard Lua; see " .. MANUAL .. std
  end
  local info = debug and debug.getinfo and debug.getinfo(f, "S")
  local where = ""
  if info and info.what ~= "C" then
    where = " defined at " .. info.short_src .. ":" .. info.linedefined
  end
  return "No help for this function" .. where .. ". " .. NOT_FOUND
end

-- help.text(...) -> string: what help(...) prints.
function help.text(...)
  if select("#", ...) == 0 then return OVERVIEW end
  local x = ...
  if x == nil then
    return "help got nil: the name you passed has no value (is it spelled right?). " .. NOT_FOUND
  end
  if type(x) == "string" then
    local names = resolve_name(x)
    if #names > 0 then return render_names(names) end
    return string.format("No help for %q. %s", x, NOT_FOUND)
  end
  if type(x) == "function" then return function_help(x) end
  if x == rawget(_G, "cuda") then return render_names({ "cuda" }) end
  if x == rawget(_G, "cpu") then return render_names({ "cpu" }) end
  local name = name_for_type(x)
  if name then return render_names({ name }) end
  -- a documented table that is called like a function (cuda.roofline)
  name = type(x) == "table" and reverse_map()[x]
  if name and entry(name) then return render_names({ name }) end
  return string.format("No help for this %s. %s", type(x), NOT_FOUND)
end

-- help(...): prints help.text(...) through the global print, so output goes
-- wherever the engine sends printed text.
function help.help(...)
  local out = rawget(_G, "print") or function(s) io.stdout:write(s, "\n") end
  out(help.text(...))
end

-- Adds or replaces an entry: name such as "lessons", and a table with sig,
-- text, and optionally example and fields. If fn is given, help(fn) finds it.
function help.register(name, e, fn)
  assert(type(name) == "string" and type(e) == "table" and e.sig and e.text,
    "help.register(name, {sig = ..., text = ...} [, fn])")
  def(name, e.sig, e.text, e.example, e.fields)
  ENTRIES[name].fn = fn
end

-- The documented names, in order; the unit tests check the manual with it.
function help.names()
  return { table.unpack(ORDER) }
end

-- One entry as a table, or nil; for tests and tools.
function help.entry(name)
  return entry(name)
end

return help

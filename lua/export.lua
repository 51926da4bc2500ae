-- export.lua: cuda.export(path), the session record (export_record.lua) written as a CUDA C++
-- program that `nvcc -o prog prog.cu` builds: the kernels' sources as the session compiled
-- them, the arrays made with cudaMalloc and given the contents the session gave them, the
-- launches in order with their configurations and arguments, each timed with CUDA events, every
-- CUDA call checked, and the final arrays compared with the session's results.
--
-- Stance: the program is for reading as much as for running. Values are written as C literals
-- a learner recognises (1.5f, 1000), contents that are all zero or all one value become a
-- cudaMemset or a fill, small ones are written out in the program, and only contents over
-- INLINE_MAX bytes go to a binary file beside it (prog.data), which the program reads back and
-- checks the size of. Floats are written with enough digits to read back as the same bits.

local M = {}

local INLINE_MAX = 4096 -- contents larger than this go to the data file

local function fail(msg) error("cuda.export: " .. msg, 3) end

local dtype_rows -- name -> the cuda.dtypes row
local function dtype(name)
  if not dtype_rows then
    dtype_rows = {}
    for _, d in ipairs(cuda.dtypes) do dtype_rows[d.name] = d end
  end
  return dtype_rows[name]
end

-- string.unpack's format for one element of each type; halves are read as their bits.
local UNPACK = { f32 = "<f", f64 = "<d", i32 = "<i4", u32 = "<I4", i64 = "<i8", u64 = "<i8",
  u8 = "<I1", i8 = "<i1", i16 = "<i2", u16 = "<I2", f16 = "<I2", bf16 = "<I2" }

-- The scalar type of a PTX parameter, where the source names none that fits.
-- PTX spells int and unsigned alike (.u32): an integer is written signed, which gives the same
-- bits whichever the parameter is.
local PTX_DTYPE = { f32 = "f32", f64 = "f64", u32 = "i32", b32 = "i32", s32 = "i32",
  u64 = "i64", b64 = "i64", s64 = "i64", u16 = "u16", b16 = "u16", s16 = "i16",
  u8 = "u8", b8 = "u8", s8 = "i8" }

local function is_half(d) return dtype(d).kind == "half" end

-- The C type host code holds an element in: a half's bits as unsigned short.
local function host_type(d) return is_half(d) and "unsigned short" or dtype(d).c_type end

local function float_literal(v, fmt, suffix, ctype)
  if v ~= v then return suffix == "f" and "NAN" or "(" .. ctype .. ")NAN" end
  if v == math.huge then return "INFINITY" end
  if v == -math.huge then return "-INFINITY" end
  local s = fmt:format(v)
  if not s:find("[.eEn]") then s = s .. ".0" end
  return s .. suffix
end

-- Element v of type d as a C literal of that type.
local function literal(d, v)
  if d == "f32" then return float_literal(v, "%.9g", "f", "float") end
  if d == "f64" then return float_literal(v, "%.17g", "", "double") end
  if is_half(d) then return ("0x%04x"):format(v) end
  if d == "i32" then return v == -2147483648 and "(-2147483647 - 1)" or ("%d"):format(v) end
  if d == "u32" then return ("%du"):format(v) end
  if d == "i64" then
    return v == math.mininteger and "(-9223372036854775807LL - 1)" or ("%dLL"):format(v)
  end
  if d == "u64" then return v < 0 and ("0x%xULL"):format(v) or ("%dULL"):format(v) end
  return ("%d"):format(v)
end

local function elements(d, bytes)
  local size, fmt, out = dtype(d).size, UNPACK[d], {}
  for i = 1, #bytes, size do out[#out + 1] = (string.unpack(fmt, bytes, i)) end
  return out
end

-- How contents `bytes` of an array of type d are written: all zero, all one value, in the
-- program, or in the data file.
local function shape_of(d, bytes)
  local size = dtype(d).size
  if #bytes == 0 or bytes == ("\0"):rep(#bytes) then return { how = "zero" } end
  local first = bytes:sub(1, size)
  if first:rep(#bytes // size) == bytes then
    return { how = "fill", value = literal(d, (string.unpack(UNPACK[d], first))) }
  end
  if #bytes <= INLINE_MAX then return { how = "inline" } end
  return { how = "file" }
end

-- ---- the program's text -----------------------------------------------------------------

local Writer = {}
Writer.__index = Writer

local function writer() return setmetatable({ lines = {} }, Writer) end
function Writer:line(fmt, ...)
  self.lines[#self.lines + 1] = select("#", ...) > 0 and fmt:format(...) or fmt
end
function Writer:text() return table.concat(self.lines, "\n") .. "\n" end

-- `static const T name[n] = {...};`, wrapped to 100 columns.
function Writer:array(d, name, bytes)
  local vals = elements(d, bytes)
  self:line("static const %s %s[%d] = {", host_type(d), name, #vals)
  local cur = "   "
  for i, v in ipairs(vals) do
    local item = " " .. literal(d, v) .. (i < #vals and "," or "")
    if #cur + #item > 98 then
      self:line(cur)
      cur = "   "
    end
    cur = cur .. item
  end
  self:line(cur)
  self:line("};")
end

-- The variable names of the arrays: d_ and the session's global name where it had one.
local function name_arrays(arrays)
  local taken = {}
  for _, a in ipairs(arrays) do
    local base = a.name and ("d_" .. a.name) or ("d_array" .. a.id)
    if taken[base] then base = base .. "_" .. a.id end
    taken[base] = true
    a.var = base
    a.label = a.name or ("array " .. a.id)
  end
end

-- A kernel's name as the program calls it: the session's, less an overload's parameter list,
-- in its source's namespace when there are several sources.
local function call_name(ev, many)
  local name = ev.name:gsub("%s*%b()$", "")
  return many and ("s" .. ev.source .. "::" .. name) or name
end

local function dim_text(d)
  if d.y == 1 and d.z == 1 then return tostring(d.x) end
  if d.z == 1 then return ("dim3(%d, %d)"):format(d.x, d.y) end
  return ("dim3(%d, %d, %d)"):format(d.x, d.y, d.z)
end

-- One argument as C: an array's pointer (cast where the kernel's parameter names another
-- type, as a float4 * does for an f32 array), or a scalar of its C type.
local function arg_text(a, ev)
  if a.kind == "null" then return "nullptr" end
  if a.kind == "array" then
    local p = a.array.var .. (a.first > 0 and (" + " .. a.first) or "")
    local templated = ev.name:find("<", 1, true)
    if a.type and a.dtype ~= a.array_dtype and not templated then
      return ("(%s)%s"):format(a.type, a.first > 0 and ("(" .. p .. ")") or p)
    end
    return p
  end
  if a.is_bool then return a.bytes:byte(1) ~= 0 and "true" or "false" end
  local d = a.dtype
  if not d or dtype(d).size ~= #a.bytes then d = PTX_DTYPE[a.ptx] end
  local v = string.unpack(UNPACK[d], a.bytes)
  if d == "f16" then return ("half_bits(%s)"):format(literal(d, v)) end
  if d == "bf16" then return ("bfloat16_bits(%s)"):format(literal(d, v)) end
  return literal(d, v)
end

local function has_c_linkage(lowered)
  return lowered and lowered ~= "" and not lowered:find("^_Z")
end

-- Refuses what one C++ file cannot hold: two sources defining one extern "C" kernel.
local function check_sources(rec)
  local seen = {}
  for _, ev in ipairs(rec.events) do
    if ev.kind == "launch" and has_c_linkage(ev.lowered) then
      local other = seen[ev.lowered]
      if other and other ~= ev.source then
        fail(("two different sources define the extern \"C\" kernel %s, and one program can " ..
          "hold only one: rename one of them and record the session again"):format(ev.lowered))
      end
      seen[ev.lowered] = ev.source
    end
  end
end

-- The -D options of a source as #define lines, the others as text for the header.
local function split_options(options)
  local defines, others, i = {}, {}, 1
  while i <= #options do
    local o = options[i]
    local def = o:match("^%-D(.+)$") or o:match("^%-%-define%-macro=(.+)$")
    if not def and (o == "-D" or o == "--define-macro") then
      i = i + 1
      def = options[i]
    end
    if def then
      local name, value = def:match("^([%a_][%w_]*)=(.*)$")
      defines[#defines + 1] = { name = name or def, value = name and value or nil }
    else
      others[#others + 1] = o
    end
    i = i + 1
  end
  return defines, others
end

local function write_sources(w, rec)
  local many = #rec.sources > 1
  local includes = {}
  if many then -- a namespace cannot hold an #include of a system header: they go first
    for _, s in ipairs(rec.sources) do
      for line in (s.source .. "\n"):gmatch("(.-)\n") do
        if line:match("^%s*#%s*include") and not includes[line] then
          includes[line] = true
          includes[#includes + 1] = line
        end
      end
    end
    for _, line in ipairs(includes) do w:line(line) end
    if #includes > 0 then w:line("") end
  end
  for i, s in ipairs(rec.sources) do
    local defines, others = split_options(s.options)
    w:line("// ---- source %d: %s, as the session compiled it%s", i, s.file,
      #others > 0 and (" (with " .. table.concat(others, " ") .. ")") or "")
    for _, d in ipairs(defines) do
      w:line("#define %s%s", d.name, d.value and (" " .. d.value) or "")
    end
    if many then w:line("namespace s%d {", i) end
    for line in (s.source:gsub("\n*$", "") .. "\n"):gmatch("(.-)\n") do
      if not (many and includes[line]) then w:line("%s", line) end
    end
    if many then w:line("}  // namespace s%d", i) end
    for _, d in ipairs(defines) do w:line("#undef %s", d.name) end
    w:line("")
  end
end

local PRELUDE = [[
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_runtime.h>
%s
// Every CUDA call is checked: a failure names the call, the file and the line, and stops.
#define CHECK(call)                                                                   \
  do {                                                                                \
    cudaError_t err_ = (call);                                                        \
    if (err_ != cudaSuccess) {                                                        \
      fprintf(stderr, "%%s:%%d: %%s failed: %%s\n", __FILE__, __LINE__, #call,              \
              cudaGetErrorString(err_));                                              \
      exit(1);                                                                        \
    }                                                                                 \
  } while (0)
]]

local CHECKS = [[
// Integers must match exactly: the same kernels on the same data give the same bits.
template <typename T>
static int check_exact(const char *name, const T *dev, const void *want, size_t n) {
  std::vector<T> got(n);
  CHECK(cudaMemcpy(got.data(), dev, n * sizeof(T), cudaMemcpyDeviceToHost));
  size_t wrong = 0, first = 0;
  for (size_t i = 0; i < n; i++)
    if (memcmp(&got[i], (const char *)want + i * sizeof(T), sizeof(T)) != 0 && !wrong++)
      first = i;
  if (wrong) {
    printf("%%s: %%zu of %%zu elements differ from the session's, the first at [%%zu]\n", name,
           wrong, n, first);
    return 1;
  }
  printf("%%s: all %%zu elements match the session's\n", name, n);
  return 0;
}

// Floats match within |got - want| <= atol + rtol * |want| (NaN matches NaN). The session's
// arithmetic is the GPU's, but a compiler is free to contract a * b + c into one fma, and
// --use_fast_math changes more: the tolerance allows for that, as cuda.compare does.
template <typename T>
static int check_floats(const char *name, const T *dev, const void *want, size_t n, double rtol,
                        double atol) {
  std::vector<T> got(n), exp(n);
  CHECK(cudaMemcpy(got.data(), dev, n * sizeof(T), cudaMemcpyDeviceToHost));
  memcpy(exp.data(), want, n * sizeof(T));
  size_t wrong = 0, first = 0;
  double worst = 0;
  for (size_t i = 0; i < n; i++) {
    double g = to_double(got[i]), e = to_double(exp[i]);
    if (std::isnan(g) && std::isnan(e)) continue;
    double err = std::fabs(g - e);
    if (!(err <= atol + rtol * std::fabs(e))) {
      if (!wrong++) first = i;
    }
    if (err > worst) worst = err;
  }
  if (wrong) {
    printf("%%s: %%zu of %%zu elements differ from the session's (rtol %%g), the first at [%%zu]\n",
           name, wrong, n, rtol, first);
    return 1;
  }
  printf("%%s: all %%zu elements match the session's (largest difference %%g)\n", name, n, worst);
  return 0;
}
]]

local DATA = [[
// The contents too large to write here (over %d bytes) are in the data file, %d bytes; the
// program reads it beside itself unless given its path: ./prog path/to/%s
static std::vector<unsigned char> data;

static void load_data(const char *argv0, const char *given) {
  std::string path = given ? given : argv0;
  if (!given) {
    size_t slash = path.rfind('/');
    path = (slash == std::string::npos ? std::string() : path.substr(0, slash + 1)) + "%s";
  }
  FILE *f = fopen(path.c_str(), "rb");
  if (!f) {
    fprintf(stderr, "cannot open %%s: it holds the arrays' contents; keep it beside the "
            "program or give its path: %%s path/to/%s\n", path.c_str(), argv0);
    exit(1);
  }
  data.resize(%d);
  size_t got = fread(data.data(), 1, data.size(), f);
  bool more = fgetc(f) != EOF;
  fclose(f);
  if (got != data.size() || more) {
    fprintf(stderr, "%%s is not the data file of this program: it should hold %%zu bytes\n",
            path.c_str(), data.size());
    exit(1);
  }
}
]]

-- Whether the program handles halves: an f16 or bf16 array, or a half passed by value. Only
-- then does it include the half headers and the helpers for them: the program is for reading,
-- and carries nothing it does not use.
local function uses_halves(rec)
  for _, a in ipairs(rec.arrays) do
    if is_half(a.dtype) then return true end
  end
  for _, ev in ipairs(rec.events) do
    for _, a in ipairs(ev.args or {}) do
      local d = a.kind == "scalar" and a.dtype
      if d and dtype(d) and is_half(d) and dtype(d).size == #a.bytes then return true end
    end
  end
  return false
end

local function count_launches(rec)
  local n = 0
  for _, ev in ipairs(rec.events) do if ev.kind == "launch" then n = n + 1 end end
  return n
end

-- The comment that opens the program: what it is, how to build it, what it checks, and the
-- record's notes (sorted, so that one session always gives the same text).
local function write_header(w, rec, base_name, nlaunch)
  w:line("// %s: a cudalab session as a CUDA C++ program, written by cuda.export.", base_name)
  w:line("// %d launch%s (%d in all, repetitions included) of kernels from %d source%s, on %d " ..
    "array%s.", nlaunch, nlaunch == 1 and "" or "es", rec.launches, #rec.sources,
    #rec.sources == 1 and "" or "s", #rec.arrays, #rec.arrays == 1 and "" or "s")
  w:line("//")
  w:line("// Build: nvcc -o %s %s", (base_name:gsub("%.cu$", "")), base_name)
  w:line("// It makes the session's arrays with cudaMalloc and gives them the contents the session")
  w:line("// gave them, runs the launches in order with their configurations and arguments, times")
  w:line("// each with CUDA events, checks every CUDA call, and compares the final arrays with the")
  w:line("// session's results: integers exactly, floats within a relative tolerance.")
  local notes = {}
  for text in pairs(rec.notes) do notes[#notes + 1] = text end
  table.sort(notes)
  for _, text in ipairs(notes) do w:line("// Note: %s.", text) end
  w:line("")
end

-- to_double for each element type, which the final checks compare in, and with halves
-- half_bits and bfloat16_bits, which make a half argument from the bits the record holds.
local function write_check_helpers(w, halves)
  w:line("// ---- checking the results ---------------------------------------------------------")
  w:line("inline double to_double(float v) { return v; }")
  w:line("inline double to_double(double v) { return v; }")
  if halves then
    w:line("inline double to_double(__half v) { return __half2float(v); }")
    w:line("inline double to_double(__nv_bfloat16 v) { return __bfloat162float(v); }")
    w:line("inline __half half_bits(unsigned short b) { __half_raw r; r.x = b; return __half(r); }")
    w:line("inline __nv_bfloat16 bfloat16_bits(unsigned short b) {")
    w:line("  __nv_bfloat16_raw r;")
    w:line("  r.x = b;")
    w:line("  return __nv_bfloat16(r);")
    w:line("}")
  end
  w:line("")
  w:line("%s", (CHECKS:format():gsub("\n$", "")))
  w:line("")
end

-- Where the contents go: each set's and each array's final contents get a shape (shape_of) and,
-- when written out, an expression main reads them from: an inline array's name (its lines are
-- gathered in `inline`), or an offset into the data file (its pieces gathered in `blobs`).
-- Returns the shapes of the sets by event index and of the results by array id.
local function place_contents(rec, inline, blobs)
  local function content(name, a, bytes)
    local s = shape_of(a.dtype, bytes)
    if s.how == "inline" then
      inline:array(a.dtype, name, bytes)
      s.expr = name
    elseif s.how == "file" then
      s.expr = ("data.data() + %d"):format(blobs.size)
      blobs[#blobs + 1] = bytes
      blobs.size = blobs.size + #bytes
    end
    return s
  end
  local sets, wants = {}, {}
  for i, ev in ipairs(rec.events) do
    if ev.kind == "set" then
      sets[i] = content(("set%d_%s"):format(i, ev.array.var:sub(3)), ev.array, ev.bytes)
    end
  end
  for _, a in ipairs(rec.arrays) do
    wants[a.id] = content("want_" .. a.var:sub(3), a, a.last or "")
  end
  return sets, wants
end

-- The contents written out in the program, then the data file's loader when there is one.
local function write_contents(w, inline, data_bytes, data_name)
  if #inline.lines > 0 then
    w:line("// ---- the contents the session gave the arrays (set...), its results (want...) ----")
    for _, l in ipairs(inline.lines) do w:line("%s", l) end
    w:line("")
  end
  if data_bytes > 0 then
    w:line("%s", (DATA:format(INLINE_MAX, data_bytes, data_name, data_name, data_name, data_bytes)
      :gsub("\n$", "")))
    w:line("")
  end
end

-- main's opening: the data file read, the arrays allocated, the events that time launches.
local function write_main_start(w, rec, data_bytes)
  w:line("int main(int argc, char **argv) {")
  if data_bytes > 0 then w:line("  load_data(argv[0], argc > 1 ? argv[1] : nullptr);") else
    w:line("  (void)argc;")
    w:line("  (void)argv;")
  end
  w:line("  // The arrays, as the session made them: device memory of the same type and size.")
  for _, a in ipairs(rec.arrays) do
    local t = dtype(a.dtype).c_type
    w:line("  %s *%s = nullptr;", t, a.var)
    w:line("  CHECK(cudaMalloc(&%s, %d * sizeof(%s)));", a.var, a.n, t)
  end
  w:line("  cudaEvent_t start, stop;")
  w:line("  CHECK(cudaEventCreate(&start));")
  w:line("  CHECK(cudaEventCreate(&stop));")
  w:line("  float ms = 0;")
end

-- A host write of the session: a cudaMemset for zeros, a filled vector for one value, else a
-- copy from the contents placed earlier (s is its shape from place_contents).
local function write_set(w, ev, s)
  local a = ev.array
  local bytes = ("%d * sizeof(%s)"):format(a.n, dtype(a.dtype).c_type)
  w:line("  // %s gets the contents the session gave it here.", a.label)
  if s.how == "zero" then
    w:line("  CHECK(cudaMemset(%s, 0, %s));", a.var, bytes)
  elseif s.how == "fill" then
    w:line("  {")
    w:line("    std::vector<%s> fill(%d, %s);", host_type(a.dtype), a.n, s.value)
    w:line("    CHECK(cudaMemcpy(%s, fill.data(), %s, cudaMemcpyHostToDevice));", a.var, bytes)
    w:line("  }")
  else
    w:line("  CHECK(cudaMemcpy(%s, %s, %s, cudaMemcpyHostToDevice));", a.var, s.expr, bytes)
  end
end

-- Launch number k of the session, repeated as it was, between two events, and its time printed.
-- The launch's error and the kernel's run are checked apart, so that a failure says which.
local function write_launch(w, ev, k, many)
  local args = {}
  for j, a in ipairs(ev.args) do args[j] = arg_text(a, ev) end
  local cfg = dim_text(ev.grid) .. ", " .. dim_text(ev.block) ..
    (ev.shared > 0 and (", " .. ev.shared) or "")
  local call = ("%s<<<%s>>>(%s);"):format(call_name(ev, many), cfg, table.concat(args, ", "))
  if ev.cooperative then -- every block resident at once, for its grid sync
    call = ("CHECK(launch_cooperative(%s, %s, %s, %d%s));"):format(call_name(ev, many),
      dim_text(ev.grid), dim_text(ev.block), ev.shared,
      #args > 0 and (", " .. table.concat(args, ", ")) or "")
  end
  w:line("  // launch %d: %s<<<%s>>>%s%s", k, ev.name, cfg,
    ev.cooperative and ", a cooperative launch (cudaLaunchCooperativeKernel)" or "",
    ev.reps > 1 and (", " .. ev.reps .. " times in a row as in the session") or "")
  w:line("  CHECK(cudaEventRecord(start));")
  if ev.reps > 1 then
    w:line("  for (int rep = 0; rep < %d; rep++) %s", ev.reps, call)
  else
    w:line("  %s", call)
  end
  w:line("  CHECK(cudaGetLastError());      // the launch itself: its configuration, arguments")
  w:line("  CHECK(cudaEventRecord(stop));")
  w:line("  CHECK(cudaEventSynchronize(stop)); // the kernel's run: a fault in it shows here")
  w:line("  CHECK(cudaEventElapsedTime(&ms, start, stop));")
  w:line("  printf(\"launch %d: %s<<<%s>>>%s: %%.3f ms\\n\", ms);", k,
    (ev.name:gsub("%%", "%%%%"):gsub("\"", "\\\"")), cfg,
    ev.reps > 1 and (" x" .. ev.reps) or "")
end

-- A __constant__, __device__ or __managed__ variable given the contents the session gave it
-- (m:constant), as bytes, which need no knowledge of its type: cudaMemcpyToSymbol, as
-- m:constant is. A __managed__ one's address is managed memory, which cudaMemcpyDefault copies
-- to wherever its pages are.
local function write_constant(w, ev, many, i)
  local sym = (many and ("s" .. ev.source .. "::") or "") .. ev.name
  local hex = {}
  for j = 1, #ev.bytes do hex[j] = ("0x%02x"):format(ev.bytes:byte(j)) end
  w:line("  // %s gets the contents the session gave it (m:constant).", ev.name)
  w:line("  {")
  w:line("    static const unsigned char c%d[] = {", i)
  for j = 1, #hex, 12 do
    w:line("      %s,", table.concat(hex, ", ", j, math.min(j + 11, #hex)))
  end
  w:line("    };")
  if ev.managed then
    w:line("    CHECK(cudaMemcpyToSymbol(%s, c%d, sizeof c%d, 0, cudaMemcpyDefault));", sym, i, i)
  else
    w:line("    CHECK(cudaMemcpyToSymbol(%s, c%d, sizeof c%d));", sym, i, i)
  end
  w:line("  }")
end

-- The session's events in order, each after a blank line.
local function write_events(w, rec, sets)
  local many, k = #rec.sources > 1, 0
  for i, ev in ipairs(rec.events) do
    w:line("")
    if ev.kind == "set" then
      write_set(w, ev, sets[i])
    elseif ev.kind == "constant" then
      write_constant(w, ev, many, i)
    else
      k = k + 1
      write_launch(w, ev, k, many)
    end
  end
end

-- Each final array against the session's result (wants, by array id): floats within cuda.compare's
-- tolerance for their type, integers exactly. Zero and one-value results are built as vectors.
local function write_final_checks(w, rec, wants)
  w:line("")
  w:line("  // The final arrays against the session's results.")
  w:line("  int bad = 0;")
  for _, a in ipairs(rec.arrays) do
    local s, d = wants[a.id], dtype(a.dtype)
    local want = s.expr
    if s.how == "zero" or s.how == "fill" then
      want = "want_" .. a.var:sub(3) .. ".data()"
      w:line("  std::vector<%s> want_%s(%d%s);", host_type(a.dtype), a.var:sub(3), a.n,
        s.how == "fill" and (", " .. s.value) or "")
    end
    if d.kind == "float" or d.kind == "half" then
      local rtol = d.rtol > 0 and d.rtol or 1e-5 -- cuda.compare's own default where 0
      w:line("  bad += check_floats(\"%s\", %s, %s, %d, %g, %g);", a.label, a.var, want, a.n, rtol,
        1e-8)
    else
      w:line("  bad += check_exact(\"%s\", %s, %s, %d);", a.label, a.var, want, a.n)
    end
  end
  w:line("")
end

-- main's end: everything freed, the verdict printed, and the exit status says it too.
local function write_main_end(w, rec)
  for _, a in ipairs(rec.arrays) do w:line("  CHECK(cudaFree(%s));", a.var) end
  w:line("  CHECK(cudaEventDestroy(start));")
  w:line("  CHECK(cudaEventDestroy(stop));")
  w:line("  if (bad)")
  w:line("    printf(\"FAILED: %d array%s differ from the session's\\n\", bad,")
  w:line("           bad == 1 ? \"\" : \"s\");")
  w:line("  else printf(\"PASSED: every array matches the session's\\n\");")
  w:line("  return bad ? 1 : 0;")
  w:line("}")
end

-- The program's text and the data file's bytes for record rec, and its number of launches.
-- The contents are placed before any text is written, since the file-level part (the inline
-- arrays, the data file's loader) must know them all before main refers to them.
-- cudaLaunchCooperativeKernel takes the arguments' addresses: each is converted to its
-- parameter's type first, as <<<>>> converts it, so a 1000 passed for a long long is 8 bytes.
local COOPERATIVE = [[
// A cooperative launch (every block resident at once, for a grid-wide sync) of kernel k.
template <typename... P, typename... A>
static cudaError_t launch_cooperative(void (*k)(P...), dim3 grid, dim3 block, size_t shared,
                                      A... a) {
  std::tuple<P...> params(a...);
  return std::apply([&](P &...p) {
    void *args[] = {nullptr, (void *)&p...};
    return cudaLaunchCooperativeKernel((const void *)k, grid, block, args + 1, shared, 0);
  }, params);
}
]]

local function cooperative(rec)
  for _, ev in ipairs(rec.events) do if ev.cooperative then return true end end
  return false
end

local function program(rec, base_name, data_name)
  name_arrays(rec.arrays)
  local halves, nlaunch = uses_halves(rec), count_launches(rec)
  local inline, blobs = writer(), { size = 0 }
  local sets, wants = place_contents(rec, inline, blobs)
  local w = writer()
  write_header(w, rec, base_name, nlaunch)
  local half_headers = halves and "#include <cuda_bf16.h>\n#include <cuda_fp16.h>\n" or ""
  w:line("%s", (PRELUDE:format(half_headers):gsub("\n$", "")))
  w:line("")
  write_sources(w, rec)
  if cooperative(rec) then
    w:line("#include <tuple>")
    w:line("%s", (COOPERATIVE:gsub("\n$", "")))
  end
  write_check_helpers(w, halves)
  write_contents(w, inline, blobs.size, data_name)
  write_main_start(w, rec, blobs.size)
  write_events(w, rec, sets)
  write_final_checks(w, rec, wants)
  write_main_end(w, rec)
  return w:text(), table.concat(blobs), nlaunch
end

-- Through a temporary renamed into place: a full disk leaves an older program whole, and a
-- FIFO or a folder under the name is an error, never a wait for a reader.
local function write_file(path, text)
  local ok, why = require("cudalab.files").write_atomic(path, text, "shared")
  if not ok then error("cuda.export: " .. why, 3) end -- 3: the caller of M.export
end

-- cuda.export(path): writes the record as the program `path` (a .cu file) and, when some
-- contents are large, the data file beside it (the same name, .data). Returns what it wrote.
-- write(path, text), when given, writes each file instead of io.open: grading passes one that
-- never follows a symbolic link (grade_sandbox.lua); a failure it raises is the export's.
function M.export(path, write)
  if type(path) ~= "string" or not path:match("%.cu$") or path:match("[\n\r]") then
    fail(("the program's path must be a file name ending in .cu (\"prog.cu\"), got %s")
      :format(type(path) == "string" and ("%q"):format(path) or type(path)))
  end
  local rec = require("export_record").current()
  if rec and rec.problem then fail("cannot export this record: " .. rec.problem) end
  local launched = false
  for _, ev in ipairs(rec and rec.events or {}) do launched = launched or ev.kind == "launch" end
  if not launched then
    fail(rec and "nothing to export: the record holds no launch yet (run the session's " ..
      "launches while it is on)" or "nothing to export: start the record with " ..
      "cuda.record(true), run the session's launches, then export")
  end
  check_sources(rec)
  local base = path:match("([^/]*)$")
  local data_path = path:gsub("%.cu$", ".data")
  local data_name = data_path:match("([^/]*)$")
  local text, blob, nlaunch = program(rec, base, data_name)
  write = write or write_file
  write(path, text)
  if #blob > 0 then write(data_path, blob) end
  return { program = path, data = #blob > 0 and data_path or nil, launches = nlaunch,
    arrays = #rec.arrays, sources = #rec.sources, data_bytes = #blob, bytes = #text }
end

return M

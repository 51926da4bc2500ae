-- save_load.lua: a:save and cuda.load, .npy and CSV. Round trips for every dtype (bit for bit),
-- the header NumPy's format asks for byte for byte, files written as NumPy writes them (no NumPy
-- here, so the bytes are written by hand from the format's description), every bad file with its
-- message, and saves that fail leaving the target as it was and no temporary file behind.
local T = dofile("tests/lua/testlib.lua")
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr
T.plan(14)

local dir = os.tmpname()
os.remove(dir)
os.execute("mkdir -p " .. dir)
local function path(name) return dir .. "/" .. name end
local function write(name, bytes)
  local f = assert(io.open(path(name), "wb"))
  f:write(bytes)
  f:close()
  return path(name)
end
local function read(p)
  local f = assert(io.open(p, "rb"))
  local s = f:read("a")
  f:close()
  return s
end
local function listing()
  local p = io.popen("ls -A " .. dir)
  local s = p:read("a")
  p:close()
  return s
end

-- Values that exercise each type: its extremes, signs, fractions, infinities.
local function values(d)
  if d.kind == "signed" then
    local hi = (1 << (8 * d.size - 1)) - 1
    return { -hi - 1, -1, 0, 1, hi, 7 }
  elseif d.kind == "unsigned" then
    local hi = d.size == 8 and -1 or (1 << (8 * d.size)) - 1
    return { 0, 1, hi, 200, d.size == 8 and math.mininteger or hi // 2 }
  end
  return { 0.0, -0.0, 1.5, -2.25, 0.1, 1 / 0, -1 / 0, 3.0e4, 1e-3 }
end

-- The .npy header NumPy writes for a descr and a shape text: version 1.0, padded to 64.
local function npy_header(descr, shape, fortran)
  local dict = string.format("{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", descr,
    fortran and "True" or "False", shape)
  local total = (10 + #dict + 1 + 63) // 64 * 64
  return "\x93NUMPY\1\0" .. string.pack("<I2", total - 10) .. dict ..
    (" "):rep(total - 10 - #dict - 1) .. "\n"
end

test("every dtype round-trips through .npy bit for bit; bf16 as f4, exact", function()
  for _, d in ipairs(cuda.dtypes) do
    local a = cuda.array(values(d), d.name)
    local p = path(d.name .. ".npy")
    checkeq(a:save(p), a, "save returns the array")
    local b, shape = cuda.load(p)
    checkeq(#shape, 1); checkeq(shape[1], #a)
    if d.name == "bf16" then
      checkeq(b.dtype, "f32", "NumPy has no bfloat16: f4 holds every bf16 value")
      check(cuda.compare(b, a:tolist(), {rtol = 0, atol = 0}), "bf16 as f4: the same values")
      b = cuda.load(p, {dtype = "bf16"})
    end
    checkeq(b.dtype, d.name)
    checkeq(b:tobytes(), a:tobytes(), d.name .. ": the same bits")
    checkeq(cuda.load(p, {host = true}).pinned, false, "host = true gives a host buffer")
  end
end)

test("every dtype round-trips through CSV, loaded as the dtype asked for", function()
  for _, d in ipairs(cuda.dtypes) do
    local a = cuda.array(values(d), d.name)
    local p = path(d.name .. ".csv")
    a:save(p)
    local b, shape = cuda.load(p, {dtype = d.name})
    checkeq(b.dtype, d.name); checkeq(shape[1], #a); checkeq(#shape, 1)
    checkeq(b:tobytes(), a:tobytes(), d.name .. ": the same bits")
  end
  checkeq(cuda.load(path("f64.csv")).dtype, "f32", "a CSV loads as f32 unless told")
  checkeq(read(path("u64.csv")):match("^[^\n]*\n[^\n]*\n([^\n]*)"), "18446744073709551615",
    "u64 written unsigned")
end)

test("the .npy header is NumPy's, byte for byte, and the data little-endian", function()
  cuda.array({1.5, -2, 3.25}, "f32"):save(path("h.npy"))
  local want = npy_header("<f4", "(3,)") .. string.pack("<fff", 1.5, -2, 3.25)
  checkeq(#want, 128 + 12)
  checkeq(read(path("h.npy")), want)
  cuda.arange(6, "i16"):save(path("h2.npy"), {shape = {2, 3}})
  checkeq(read(path("h2.npy")), npy_header("<i2", "(2, 3)") ..
    string.pack("<i2i2i2i2i2i2", 0, 1, 2, 3, 4, 5))
  cuda.array({255, 0}, "u8"):save(path("u8.npy"))
  checkeq(read(path("u8.npy")), npy_header("|u1", "(2,)") .. "\255\0")
end)

test("a .npy as NumPy writes it loads, with its shape: 2-D C order, version 2.0, scalars",
  function()
  local p = write("np.npy", npy_header("<f8", "(2, 3)") ..
    string.pack("<dddddd", 1, 2, 3, 4, 5, 6.5))
  local a, shape = cuda.load(p)
  checkeq(a.dtype, "f64"); checkeq(#a, 6); checkeq(shape[1], 2); checkeq(shape[2], 3)
  check(cuda.compare(a, {1, 2, 3, 4, 5, 6.5}, {rtol = 0, atol = 0}))
  -- version 2.0: a 4-byte header length
  local dict = "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }"
  local total = (12 + #dict + 1 + 63) // 64 * 64
  p = write("v2.npy", "\x93NUMPY\2\0" .. string.pack("<I4", total - 12) .. dict ..
    (" "):rep(total - 12 - #dict - 1) .. "\n" .. string.pack("<i8i8", -5, 1 << 40))
  a = cuda.load(p)
  checkeq(a[0], -5); checkeq(a[1], 1 << 40)
  -- a 0-d array (np.save(f, np.float32(2))) and a 1-D one in "Fortran order", which is C order
  a, shape = cuda.load(write("s.npy", npy_header("<f4", "()") .. string.pack("<f", 2)))
  checkeq(#a, 1); checkeq(a[0], 2.0); checkeq(#shape, 0)
  a = cuda.load(write("f1.npy", npy_header("<u4", "(2,)", true) .. string.pack("<I4I4", 7, 9)))
  checkeq(a[1], 9)
  -- '<u1' as some writers spell a byte, and an empty array
  checkeq(cuda.load(write("b.npy", npy_header("<u1", "(1,)") .. "\7"))[0], 7)
  checkeq(#cuda.load(write("e.npy", npy_header("<f4", "(0,)"))), 0)
end)

-- NumPy reads a header with Python's own parser (ast.literal_eval in numpy.lib.format): the same
-- here, with Python's csv module for the CSV, and np.load itself where NumPy is installed.
local PY = [[
import ast, csv, struct, sys
d = sys.argv[1]
raw = open(d + '/py.npy', 'rb').read()
assert raw[:8] == b'\x93NUMPY\x01\x00', raw[:8]
hl = struct.unpack('<H', raw[8:10])[0]
assert (10 + hl) % 64 == 0 and raw[10 + hl - 1:10 + hl] == b'\n'
h = ast.literal_eval(raw[10:10 + hl].decode('latin1'))
assert h == {'descr': '<f8', 'fortran_order': False, 'shape': (2, 3)}, h
vals = struct.unpack('<6d', raw[10 + hl:])
rows = [[float(x) for x in r] for r in csv.reader(open(d + '/py.csv'))]
try:
    import numpy as np
    a = np.load(d + '/py.npy')
    assert a.shape == (2, 3) and a.dtype == np.float64 and list(a.ravel()) == list(vals)
    b = np.load(d + '/bf.npy')
    assert b.dtype == np.float32 and b.shape == (2,)
    print('numpy', np.__version__)
except ImportError:
    pass
print(' '.join(repr(v) for v in vals), '|', ' '.join(repr(v) for r in rows for v in r))
]]
local function runs(cmd) return os.execute(cmd .. " >/dev/null 2>&1") == true end
local have_python = runs("python3 -c 'import ast, csv, struct'")
local test_py = have_python and test or function(name) T.skip(name, "python3 not installed") end
-- A Python with NumPy: the one on PATH, or the system's (a Debian package) beside another
local NUMPY = runs("python3 -c 'import numpy'") and "python3" or
  runs("/usr/bin/python3 -c 'import numpy'") and "/usr/bin/python3" or nil
local test_np = NUMPY and test or function(name) T.skip(name, "NumPy not installed") end
test_py("Python reads what a:save writes: the .npy header as NumPy parses it, the CSV", function()
  local x = cuda.array({0.1, -2, 1e300, 4, 5.5, -0.0}, "f64")
  x:save(path("py.npy"), {shape = {2, 3}})
  x:save(path("py.csv"), {shape = {2, 3}})
  cuda.array({0.1, 2}, "bf16"):save(path("bf.npy"))
  write("check.py", PY)
  local p = io.popen("python3 " .. path("check.py") .. " " .. dir .. " 2>&1")
  local out = p:read("a")
  p:close()
  local vals = "0.1 -2.0 1e+300 4.0 5.5 -0.0"
  checkeq(out:gsub("^numpy [^\n]*\n", ""), vals .. " | " .. vals .. "\n", "what Python read")
end)

-- Files np.save writes, one per dtype NumPy has of cudalab's, 2-D; and what cudalab refuses.
local NP = [==[
import sys, numpy as np
d = sys.argv[1]
vals = [0.1, -2.0, 3.5, 65504.0, 1e-3, -0.0]
for name, dt in [('f32', 'float32'), ('f64', 'float64'), ('f16', 'float16')]:
    np.save(d + '/np_' + name + '.npy', np.array(vals, dtype=dt).reshape(2, 3))
for name, dt in [('i8', 'int8'), ('u8', 'uint8'), ('i16', 'int16'), ('u16', 'uint16'),
                 ('i32', 'int32'), ('u32', 'uint32'), ('i64', 'int64'), ('u64', 'uint64')]:
    info = np.iinfo(dt)
    np.save(d + '/np_' + name + '.npy', np.array([[info.min, 0, 1], [2, 100, info.max]], dtype=dt))
np.save(d + '/np_fortran.npy', np.asfortranarray(np.arange(6, dtype='float32').reshape(2, 3)))
np.save(d + '/np_big.npy', np.arange(3, dtype='>f4'))
np.save(d + '/np_obj.npy', np.array([1, 'a'], dtype=object), allow_pickle=True)
np.save(d + '/np_bool.npy', np.array([True, False]))
np.save(d + '/np_scalar.npy', np.float64(2.5))
print(np.__version__)
]==]
test_np("files NumPy's np.save wrote load with their values and shape; what cannot is refused",
  function()
  write("np.py", NP)
  local p = io.popen(NUMPY .. " " .. path("np.py") .. " " .. dir .. " 2>&1")
  local out = p:read("a")
  p:close()
  check(out:match("^%d+%.%d+"), "NumPy wrote the files: " .. out)
  for _, dt in ipairs({ "f32", "f64", "f16" }) do
    local a, shape = cuda.load(path("np_" .. dt .. ".npy"))
    checkeq(a.dtype, dt); checkeq(shape[1], 2); checkeq(shape[2], 3)
    checkeq(a:tobytes(), cuda.array({0.1, -2.0, 3.5, 65504.0, 1e-3, -0.0}, dt):tobytes(),
      dt .. ": NumPy's bits are the ones cudalab rounds to")
  end
  for _, d in ipairs(cuda.dtypes) do
    if d.kind == "signed" or d.kind == "unsigned" then
      local a = cuda.load(path("np_" .. d.name .. ".npy"))
      local lo, hi = values(d)[1], nil
      if d.kind == "unsigned" then lo, hi = 0, d.size == 8 and -1 or (1 << (8 * d.size)) - 1
      else hi = (1 << (8 * d.size - 1)) - 1 end
      checkeq(a.dtype, d.name)
      checkeq(a:tobytes(), cuda.array({lo, 0, 1, 2, 100, hi}, d.name):tobytes(), d.name)
    end
  end
  checkerr("in Fortran order (column by column)", cuda.load, path("np_fortran.npy"))
  checkerr("holds big-endian data ('>f4')", cuda.load, path("np_big.npy"))
  checkerr("holds Python objects ('|O')", cuda.load, path("np_obj.npy"))
  checkerr("holds booleans ('|b1')", cuda.load, path("np_bool.npy"))
  local s, shape = cuda.load(path("np_scalar.npy"))
  checkeq(s[0], 2.5); checkeq(#shape, 0)
  -- and the other way: NumPy loads every dtype cudalab saves, with its values
  for _, d in ipairs(cuda.dtypes) do
    cuda.array(values(d), d.name):save(path("cl_" .. d.name .. ".npy"))
  end
  write("back.py", "import sys, numpy as np\nfor n in sys.argv[2:]:\n" ..
    "    a = np.load(sys.argv[1] + '/cl_' + n + '.npy')\n" ..
    "    print(n, a.dtype, a.shape, ' '.join(repr(x) for x in a.tolist()))\n")
  local names = {}
  for _, d in ipairs(cuda.dtypes) do names[#names + 1] = d.name end
  p = io.popen(NUMPY .. " " .. path("back.py") .. " " .. dir .. " " .. table.concat(names, " ") ..
    " 2>&1")
  out = p:read("a")
  p:close()
  check(out:find("\nbf16 float32 %(9,%) 0.0 %-0.0 1.5 %-2.25 0.10009765625 inf %-inf 29952.0 " ..
    "0.00099945068359375\n"), out)
  check(out:find("\ni8 int8 %(6,%) %-128 %-1 0 1 127 7\n"), out)
  check(out:find("\nu64 uint64 %(5,%) 0 1 18446744073709551615 200 9223372036854775808\n"), out)
  check(out:find("^f32 float32 %(9,%) 0.0 %-0.0 1.5 %-2.25 0.10000000149011612 inf %-inf " ..
    "30000.0 0.0010000000474974513\n"), out)
end)

test("a 2-D CSV loads row by row with its shape; comments and blank lines are skipped", function()
  local p = write("m.csv", "# x, y\n1, 2.5\n\n3,4\r\n-5 ,6e1\n")
  local a, shape = cuda.load(p, {dtype = "f64"})
  checkeq(shape[1], 3); checkeq(shape[2], 2)
  check(cuda.compare(a, {1, 2.5, 3, 4, -5, 60}, {rtol = 0, atol = 0}))
  cuda.arange(6, "i32"):save(path("m2.csv"), {shape = {2, 3}})
  checkeq(read(path("m2.csv")), "0,1,2\n3,4,5\n")
  checkeq(cuda.load(path("m2.csv"), {dtype = "u8"})[5], 5)
  checkeq(cuda.load(write("w.csv", "3.000000000000000000e+00\n"), {dtype = "i32"})[0], 3,
    "numpy.savetxt's default %.18e of a whole number reads as an integer")
  local x = cuda.rand(1000, "f32", 3)
  x:save(path("r.csv"))
  checkeq(cuda.load(path("r.csv")):tobytes(), x:tobytes(), "f32 written with enough digits")
end)

test("the format comes from the extension or format =, and anything else is refused", function()
  local a = cuda.array({1, 2})
  checkerr("a:save: cannot tell the format of '" .. path("a.txt") .. "' from its extension: " ..
    "name it .npy or .csv, or say {format = \"npy\"} or {format = \"csv\"}", a.save, a,
    path("a.txt"))
  checkerr("cannot tell the format of '" .. dir .. "/noext'", a.save, a, dir .. "/noext")
  checkerr("cuda.load: cannot tell the format of 'x.dat'", cuda.load, "x.dat")
  a:save(path("a.dat"), {format = "npy"})
  checkeq(cuda.load(path("a.dat"), {format = "npy"})[1], 2.0)
  checkerr('a:save: format must be "npy" or "csv", got "xls"', a.save, a, path("a.npy"),
    {format = "xls"})
  checkerr('format must be "npy" or "csv", got number', cuda.load, path("a.npy"), {format = 1})
  checkerr("(string expected, got no value)", a.save, a)
  checkerr("a:save: a shape of 2 sizes holds 6 elements, and the array has 2", a.save, a,
    path("s.npy"), {shape = {2, 3}})
  checkerr("a:save: shape[2] must be a whole number of 0 or more, got -1", a.save, a,
    path("s.npy"), {shape = {1, -1}})
  checkerr("a:save: a CSV file holds 1 or 2 dimensions", a.save, a, path("s.csv"),
    {shape = {1, 1, 2}})
  checkerr('cuda.load: dtype must be one of', cuda.load, path("a.npy"), {dtype = "f3"})
  checkerr("cuda.load: cannot open '" .. path("none.npy") .. "': No such file", cuda.load,
    path("none.npy"))
  checkerr("is not a regular file", cuda.load, dir .. "/.", {format = "csv"})
  os.execute("mkfifo " .. path("fifo.npy"))
  checkerr("cuda.load: '" .. path("fifo.npy") .. "' is not a regular file", cuda.load,
    path("fifo.npy")) -- at once: a FIFO with no writer is never waited on
  checkerr("self is a cuda.Array<f32>[2] that has been freed", function()
    local b = cuda.array(2)
    b:free()
    b:save(path("f.npy"))
  end)
  check(not ("\n" .. listing()):find("\nf%.npy\n"), "nothing written for a freed array")
end)

test("bad .npy files: each refused with what is wrong and what to do", function()
  local good = npy_header("<f4", "(4,)") .. string.pack("<ffff", 1, 2, 3, 4)
  local function bad(name, bytes, msg)
    checkerr(msg, cuda.load, write(name, bytes))
  end
  bad("t1.npy", good:sub(1, -3), "cuda.load: '" .. path("t1.npy") .. "' is truncated: its " ..
    "header says 4 elements of f32 (16 bytes), and the file holds 14 bytes after the header")
  bad("t2.npy", good:sub(1, 40), "truncated: the file ends inside the .npy header")
  bad("t3.npy", good:sub(1, 8), "truncated: the file ends inside the .npy header")
  bad("t4.npy", good .. "xx", "has 2 bytes after the 4 elements its header describes")
  bad("m.npy", "\x93NUMPZ" .. good:sub(7), "not a .npy file: it does not start with NumPy's " ..
    "magic \\x93NUMPY")
  bad("m2.npy", "", "not a .npy file")
  bad("v.npy", "\x93NUMPY\9\0" .. good:sub(9), "a .npy file of format version 9.0")
  bad("o.npy", npy_header("|O", "(2,)") .. ("\0"):rep(16), "holds Python objects ('|O'), not " ..
    "numbers")
  bad("be.npy", npy_header(">f4", "(1,)") .. "\0\0\128\63", "holds big-endian data ('>f4'); " ..
    "cudalab reads little-endian only: in NumPy, save a.astype(a.dtype.newbyteorder('<'))")
  bad("bool.npy", npy_header("|b1", "(1,)") .. "\1", "holds booleans ('|b1'): in NumPy, " ..
    "save a.astype(np.uint8)")
  bad("c.npy", npy_header("<c8", "(1,)") .. ("\0"):rep(8), "dtype '<c8' is not one cudalab " ..
    "arrays hold")
  bad("u.npy", npy_header("<U3", "(1,)") .. ("\0"):rep(12), "dtype '<U3' is not one")
  bad("st.npy", npy_header("[('a', '<f4')]", "(1,)"):gsub("'%[%(", "[("):gsub("%)%]'", ")]") ..
    "\0\0\0\0", "holds structured records (a list of fields)")
  bad("fo.npy", npy_header("<f4", "(2, 2)", true) .. ("\0"):rep(16), "in Fortran order (column " ..
    "by column); cudalab reads C order: in NumPy, save np.ascontiguousarray(a)")
  bad("sh.npy", npy_header("<f4", "(2.5,)") .. ("\0"):rep(8), "shape is not a tuple of whole " ..
    "numbers")
  bad("big.npy", npy_header("<f4", "(99999999999999999999,)"), "shape is too large")
  bad("key.npy", npy_header("<f4", "(1,)"):gsub("'shape'", "'shap2'") .. "\0\0\0\0",
    "has a key 'shap2' that NumPy does not write")
  bad("nodict.npy", "\x93NUMPY\1\0\6\0hello\n", "the .npy header is not a dict")
  local huge = "\x93NUMPY\2\0" .. string.pack("<I4", 1 << 30)
  bad("huge.npy", huge, "the .npy header says it is 1073741824 bytes long")
end)

test("bad CSV files: the line and field of the first thing that is not a number", function()
  checkerr("cuda.load: '" .. path("n.csv") .. "', line 3, field 2: 'abc' is not a number",
    cuda.load, write("n.csv", "1,2\n3,4\n5,abc\n"))
  checkerr("line 1, field 1: '' is not a number", cuda.load, write("e.csv", ",\n"))
  checkerr("line 2 has 3 fields, and the first row has 2", cuda.load,
    write("r.csv", "1,2\n3,4,5\n"))
  checkerr("line 1, field 1: 300 is not a whole number in the range of u8 (0..255); load with " ..
    "another dtype", cuda.load, write("u.csv", "300\n"), {dtype = "u8"})
  checkerr("line 1, field 1: 1.5 is not a whole number in the range of i32", cuda.load,
    write("f.csv", "1.5\n"), {dtype = "i32"})
  checkerr("line 2, field 1: -1 is not a whole number in the range of u64 " ..
    "(0..18446744073709551615)", cuda.load, write("neg.csv", "1\n-1\n"), {dtype = "u64"})
  checkerr("line 1, field 1: nan is not a whole number in the range of i8 (-128..127)",
    cuda.load, write("nan.csv", "nan\n"), {dtype = "i8"})
  checkerr("line 1, field 1: '1 2' is not a number", cuda.load, write("sp.csv", "1 2\n"))
  checkerr("line 1, field 1: '" .. ("9"):rep(40) .. "...' is not a number", cuda.load,
    write("long.csv", ("9"):rep(80) .. "\n"))
end)

test("a save that fails leaves the file it would replace as it was, and no temporary file",
  function()
  local keep = path("keep.npy")
  cuda.array({7, 8, 9}, "i32"):save(keep)
  local before = read(keep)
  -- the target is a folder: the rename fails after the data was written
  os.execute("mkdir -p " .. path("folder.npy"))
  checkerr("a:save: cannot write '" .. path("folder.npy") .. "': Is a directory",
    function() cuda.arange(10):save(path("folder.npy")) end)
  check(not listing():find(".tmp-", 1, true), "no temporary file left: " .. listing())
  -- the disk fills up half-way (a file size limit, in a child): keep.npy is untouched
  local cmd = string.format("sh -c \"trap '' XFSZ; ulimit -f 16; %s --backend %s -e " ..
    "'cuda.arange(100000):save(\\\"%s\\\")' 2>&1\"", T.self_command(), cuda.backend(), keep)
  local p = io.popen(cmd)
  local out = p:read("a")
  p:close()
  check(out:find("a:save: cannot write " .. keep .. ".tmp-", 1, true) and
    out:find("File too large", 1, true), out)
  checkeq(read(keep), before, "the old file is intact")
  check(not listing():find(".tmp-", 1, true), "no temporary file left: " .. listing())
  checkeq(cuda.load(keep)[2], 9)
  checkerr("cannot write '" .. dir .. "/no/such/x.npy': No such file or directory", function()
    cuda.array(1):save(dir .. "/no/such/x.npy")
  end)
end)

test("a host buffer saves as an array does; an empty array too", function()
  local h = cuda.host({1, 2, 3}, "f64", {pinned = true})
  h:save(path("host.csv"))
  checkeq(read(path("host.csv")), "1\n2\n3\n")
  cuda.array(0):save(path("empty.npy"))
  checkeq(#cuda.load(path("empty.npy")), 0)
  cuda.array(0):save(path("empty.csv"))
  checkeq(read(path("empty.csv")), "")
  checkeq(#cuda.load(path("empty.csv")), 0)
end)

local test_runs = cuda.backend() == "none" and function(name)
  T.skip(name, "no kernel runs without a GPU or the simulator") end or test
test_runs("a loaded array works in a kernel, checked against the CPU", function()
  local k = cuda.kernel[[__global__ void twice(float *a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] *= 2; }]]
  local x = cuda.rand(1000, "f32", 9)
  x:save(path("x.npy"))
  local y = cuda.load(path("x.npy"))
  k[{4, 256}](y, #y)
  local want = {}
  for i, v in ipairs(x:tolist()) do want[i] = 2 * v end
  assert(cuda.compare(y, want, {rtol = 0, atol = 0}))
end)

test("help describes a:save and cuda.load", function()
  local help = require "help"
  check(help.text("Array:save"):find("a:save(path", 1, true))
  check(help.text(cuda.load):find("cuda.load(path", 1, true))
end)

os.execute("rm -rf " .. dir)
return T.done()

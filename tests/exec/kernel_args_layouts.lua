-- kernel_args_layouts.lua: structs whose layout their declarations change (alignas on a member,
-- packed structs and #pragma pack, enum members) and parameters in array syntax (float a[],
-- float (*m)[4]), passed as a learner passes them: a table for a struct by value, an array for
-- a pointer. Each kernel reports what it read, and sizeof, which is checked against a CPU
-- reference; every refusal against its message.
local T = dofile("tests/lua/testlib.lua")
local test, check, checkeq, checkerr = T.test, T.check, T.checkeq, T.checkerr
T.plan(7)

local function same(got, want, what)
  checkeq(#got, #want, what .. ": length")
  for i = 1, #want do checkeq(got[i], want[i], what .. "[" .. (i - 1) .. "]") end
end

test("alignas on a member moves the members after it, and every member is asked for", function()
  local k = cuda.kernel([[
struct A { char a; alignas(2) char b; char c[5]; double x; };
__global__ void k(A s, double *o) {
  o[0] = s.a; o[1] = s.b;
  for (int i = 0; i < 5; i++) o[2 + i] = s.c[i];
  o[7] = s.x; o[8] = sizeof(A);
}]])
  local o = cuda.array(9, "f64")
  k[{1, 1}]({a = 1, b = 2, c = {3, 4, 5, 6, 7}, x = 8.5}, o)
  same(o:tolist(), {1, 2, 3, 4, 5, 6, 7, 8.5, 16}, "A read on the device")
  checkerr("argument 1 (A s), field 'b': missing (A has 4 fields; give every one)",
    k[{1, 1}], {a = 1, c = {3, 4, 5, 6, 7}, x = 8.5}, o)
end)

test("a packed struct is 13 bytes: an array of whole records fits its pointer", function()
  local k = cuda.kernel([[
struct __attribute__((packed)) Rec { char tag; int v; double d; };
__global__ void p(Rec *r, int *size, int n) {
  int i = threadIdx.x;
  if (i == 0) *size = sizeof(Rec);
  if (i < n) { r[i].v += 1; r[i].d *= 2; }
}]])
  local n, bytes, want = 7, {}, {}
  for i = 0, n - 1 do
    local rec = string.pack("<b i4 d", i - 3, 100 * i, i + 0.5)
    local out = string.pack("<b i4 d", i - 3, 100 * i + 1, 2 * (i + 0.5))
    for j = 1, 13 do bytes[#bytes + 1], want[#want + 1] = rec:byte(j), out:byte(j) end
  end
  local r, size = cuda.array(bytes, "u8"), cuda.array(1, "i32")
  k[{1, 32}](r, size, n)
  checkeq(size[0], 13, "sizeof(Rec) on the device")
  same(r:tolist(), want, "records after the kernel")
  checkerr("argument 1 (Rec *r): got cuda.Array<u8>[112] (112 bytes), which is not a whole "
    .. "number of Rec (13 bytes each)", k[{1, 32}], cuda.array(16 * n, "u8"), size, n)
end)

test("#pragma pack(push, 1) and pop: a struct by value laid out packed, the next one not", function()
  local k = cuda.kernel([[
#pragma pack(push, 1)
struct Tight { char tag; int v; double d; };
#pragma pack(pop)
struct Loose { char tag; int v; };
__global__ void k(Tight t, Loose l, double *o) {
  o[0] = t.tag; o[1] = t.v; o[2] = t.d; o[3] = sizeof(Tight);
  o[4] = l.tag; o[5] = l.v; o[6] = sizeof(Loose);
}]])
  local o = cuda.array(7, "f64")
  k[{1, 1}]({tag = -5, v = 123456, d = 0.25}, {tag = 9, v = -7}, o)
  same(o:tolist(), {-5, 123456, 0.25, 13, 9, -7, 8}, "Tight and Loose on the device")
end)

test("enum members are packed as the integer they are stored as", function()
  local k = cuda.kernel([[
enum Mode { A = 3, B = 7 };
enum class Op : unsigned char { Add = 1, Mul = 2 };
struct S { Op op; Mode m; float v; };
__global__ void k(S s, Mode m, double *o) {
  o[0] = (int)s.op; o[1] = s.m; o[2] = s.v; o[3] = sizeof(S); o[4] = m;
  o[5] = s.op == Op::Mul ? s.v * 2 : s.v + 1;
}]])
  local o = cuda.array(6, "f64")
  k[{1, 1}]({op = 2, m = 7, v = 1.5}, 3, o)
  same(o:tolist(), {2, 7, 1.5, 12, 3, 3}, "S on the device")
  checkerr("argument 1 (S s), field 'op': 300 does not fit in Op", k[{1, 1}],
    {op = 300, m = 7, v = 1.5}, 3, o)
  checkerr("argument 1 (S s), field 'm': Mode holds whole numbers, got 1.5", k[{1, 1}],
    {op = 1, m = 1.5, v = 1.5}, 3, o)
end)

test("array syntax: float a[] and const int b[8] are checked as pointers, float (*m)[4] by rows",
  function()
  local k = cuda.kernel([[
__global__ void ad(float a[], const int b[8], float (*m)[4], int n) {
  int i = threadIdx.x;
  if (i < n) a[i] = b[i] + m[i][0] + m[i][3];
}]])
  local a, b, m = cuda.array(4), cuda.arange(8, "i32"), cuda.arange(16)
  k[{1, 4}](a, b, m, 4)
  local want = {}
  for i = 0, 3 do want[i + 1] = i + 4 * i + 4 * i + 3 end
  same(a:tolist(), want, "a")
  checkerr("argument 1 (float *a): got cuda.Array<i32>[4], but the kernel expects an array of "
    .. "f32 (float)", k[{1, 4}], cuda.array(4, "i32"), b, m, 4)
  checkerr("argument 2 (const int *b): got cuda.Array<f32>[8], but the kernel expects an array "
    .. "of i32 (int)", k[{1, 4}], a, cuda.arange(8), m, 4)
  checkerr("argument 3 (float (*m)[4]): got cuda.Array<f32>[6], which is not a whole number of "
    .. "rows of 4 elements (the parameter points at float[4])", k[{1, 4}], a, b, cuda.array(6), 4)
end)

test("a layout the reader refuses is named, and the struct's bytes still pass", function()
  local k = cuda.kernel([[
struct P { char t; int v; } __attribute__((packed));
__global__ void k(P p, int *o) { o[0] = p.t; o[1] = p.v; o[2] = sizeof(P); }]],
    {warnings = false})
  local o = cuda.array(3, "i32")
  checkerr("argument 1 (P p): its layout is unknown (struct 'P' has an attribute after its "
    .. "closing brace, which the compiler ignores: write it after the keyword, as in struct "
    .. "__attribute__((packed)) P): pass its 8 bytes as a string", k[{1, 1}], {t = 1, v = 2}, o)
  k[{1, 1}](string.pack("<b xxx i4", 4, -9), o)
  same(o:tolist(), {4, -9, 8}, "P from its bytes")
end)

test("a char array field takes a string, padded with zeros, or a table of its bytes", function()
  local k = cuda.kernel([[
struct Tag { int id; char name[8]; unsigned char raw[3]; };
__global__ void k(Tag t, int *o) {
  o[0] = t.id;
  for (int i = 0; i < 8; i++) o[1 + i] = t.name[i];
  for (int i = 0; i < 3; i++) o[9 + i] = t.raw[i];
}]])
  local o = cuda.array(12, "i32")
  k[{1, 1}]({id = 7, name = "Hi", raw = "\255\0\1"}, o)
  same(o:tolist(), {7, 72, 105, 0, 0, 0, 0, 0, 0, 255, 0, 1}, "a short string")
  k[{1, 1}]({id = 8, name = "exactly8", raw = {1, 2, 3}}, o)
  local want = {8}
  for i = 1, 8 do want[#want + 1] = ("exactly8"):byte(i) end
  for i = 1, 3 do want[#want + 1] = i end
  same(o:tolist(), want, "eight bytes, no terminator")
  checkerr("argument 1 (Tag t), field 'name': a string of 9 bytes does not fit char[8] (8 bytes "
    .. "at most; a shorter one is padded with zeros)", k[{1, 1}],
    {id = 1, name = "too long!", raw = {0, 0, 0}}, o)
end)

return T.done()

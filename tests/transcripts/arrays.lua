a = cuda.arange(10, "i32")
a
#a
a[9]
a[10]
cuda.array{1.5, 2.5}
cuda.host({1, 2, 3}, "u8")
a:free()
a

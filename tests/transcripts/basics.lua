1 + 1
x = 10
x * 2
"text prints raw"
{1, 2, {a = 3}}
for i = 1, 3 do
  io.write(i, " ")
end
print()
nil
return 1, nil, "b"
error("a plain error")
local t = {} t.x.y = 1
print("still here")

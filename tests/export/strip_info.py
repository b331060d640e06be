# Print an MLIR file with every `compilation_info = #...<...>` attribute
# entry removed (angle brackets balanced), and `{}` left empty dropped.
import re, sys
s = open(sys.argv[1]).read()
out, i, key = [], 0, "compilation_info = "
while True:
    j = s.find(key, i)
    if j < 0:
        out.append(s[i:])
        break
    out.append(s[i:j])
    k = s.index("<", j)
    depth = 0
    while True:
        if s[k] == "<":
            depth += 1
        elif s[k] == ">":
            depth -= 1
            if depth == 0:
                break
        k += 1
    i = k + 1
    if s[i:i + 2] == ", ":
        i += 2
t = "".join(out)
t = re.sub(r" \{\}", "", t)
t = re.sub(r", \}", "}", t)
sys.stdout.write(t)

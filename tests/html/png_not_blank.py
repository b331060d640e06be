#!/usr/bin/env python3
# Exit 0 if the PNG screenshot given is not blank: enough distinct colours and
# enough non-white pixels (decoded by hand: PNG filters undone, no library).
import sys, zlib, struct
d = open(sys.argv[1], 'rb').read()
assert d[:8] == b'\x89PNG\r\n\x1a\n'
i, idat = 8, b''
while i < len(d):
    n, t = struct.unpack('>I4s', d[i:i + 8])
    if t == b'IHDR': w, h, depth, ctype = struct.unpack('>IIBB', d[i + 8:i + 18])
    if t == b'IDAT': idat += d[i + 8:i + 8 + n]
    i += 12 + n
assert depth == 8 and ctype in (2, 6), (depth, ctype)
bpp = 3 if ctype == 2 else 4
raw = zlib.decompress(idat)
stride = w * bpp
prev = bytearray(stride)
white = colours = 0
seen = set()
for y in range(h):
    f = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    if f == 1:
        for x in range(bpp, stride): line[x] = (line[x] + line[x - bpp]) & 255
    elif f == 2:
        line = bytearray((a + b) & 255 for a, b in zip(line, prev))
    elif f == 3:
        for x in range(stride):
            left = line[x - bpp] if x >= bpp else 0
            line[x] = (line[x] + ((left + prev[x]) >> 1)) & 255
    elif f == 4:
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]; c = prev[x - bpp] if x >= bpp else 0
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    prev = line
    if y % 4 == 0:
        for x in range(0, stride, bpp * 4):
            px = bytes(line[x:x + 3])
            seen.add(px)
            white += px == b'\xff\xff\xff'
            colours += 1
nonwhite = 1 - white / colours
print(f'  {w}x{h}, {len(seen)} distinct colours, {nonwhite:.1%} non-white pixels', file=sys.stderr)
sys.exit(0 if len(seen) > 20 and nonwhite > 0.02 else 1)

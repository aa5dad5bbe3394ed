#!/bin/bash
# The architecture picture held against the code.  The picture is
# docs/layers.txt (parts, arrows, never-arrows, known exceptions; its header
# says the format); layers.py reads it and every include and call of lib/,
# harness/, guest/ and sinkhole/, and fails a test with the file and the
# line when an include runs against an arrow, crosses a never-arrow, or
# closes a circle of includes or calls between files.  TAP.
set -u
src="${1:?usage: layers.sh SOURCE-ROOT}"
exec python3 "$(dirname "$0")/layers.py" "$src"

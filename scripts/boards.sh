# SPDX-License-Identifier: Apache-2.0
# The board registry (ports/boards.txt) for the scripts, sourced: board_rows prints "board family cpu qemu
# flags" a board; board_field BOARD N its Nth column (2 family, 3 cpu, 4 qemu, 5 flags); board_flagged FLAG
# the boards with that flag; board_harness the board whose cross tree builds the loader's QEMU harness.
boards_file="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/ports/boards.txt"
board_rows() { grep -v '^#' "$boards_file" | awk 'NF == 5'; }
board_names() { board_rows | awk '{print $1}'; }
board_field() { board_rows | awk -v b="$1" -v n="$2" '$1 == b {print $n}'; }
board_flagged() { board_rows | awk -v f="$1" '("," $5 ",") ~ ("," f ",") {print $1}'; }
board_harness() { board_flagged harness | head -1; }

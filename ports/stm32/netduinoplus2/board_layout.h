/* SPDX-License-Identifier: Apache-2.0 */
/* QEMU netduinoplus2 runs the NUCLEO-F401RE port: the F401's layout, on the first 512 KiB of the F405's
 * flash. */
#include "../nucleo-f401re/board_layout.h"

/* The input format of fuzz-capture (shared with gen-capture-corpus): a
 * sequence of frames, each
 *
 *   u8 flags | u16 length, little-endian | length bytes of Ethernet frame
 *
 * which the harness writes into a well-formed pcap, so the fuzzer spends
 * its effort inside the frames (the guest's bytes) rather than on the
 * framing QEMU writes.  A cut final frame takes what is there. */
#pragma once

#define FUZZ_CAPTURE_FROM_GUEST 0x01  /* source MAC := the guest's */
#define FUZZ_CAPTURE_CLIPPED 0x02     /* recorded as if the snapshot length cut it in half */
#define FUZZ_CAPTURE_TO_GUEST 0x04    /* destination MAC := the guest's (a reply) */

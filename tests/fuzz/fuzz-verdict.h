/* The input format of fuzz-verdict, shared with its seed generator
 * (gen-verdict-corpus.c).
 *
 *   header (FUZZ_VERDICT_HEADER bytes):
 *     [0]       flags: FUZZ_VERDICT_COMPLETE, FUZZ_VERDICT_TRAILER
 *     [1..3]    ignored
 *     [4..8)    the trailer's end reason (le32, enum airlock_end_reason)
 *     [8..12)   the run's time limit in ms (le32)
 *     [12..16)  the trailer's exit status (le32)
 *   then parts, each: kind (1 byte), length (le32), that many bytes (cut
 *   at the input's end):
 *     FUZZ_VERDICT_PART_EVENT    one EVENT frame's payload (TLVs), the next seq
 *     FUZZ_VERDICT_PART_PCAP     the capture (the last one counts; none: no capture)
 *     FUZZ_VERDICT_PART_POLICY   the policy's text (the last one counts; none, or
 *                                one that does not parse: no policy)
 *     FUZZ_VERDICT_PART_LOG      one guest LOG line
 *     FUZZ_VERDICT_PART_SINKHOLE the sinkhole's record file (the last one counts;
 *                                none: the run had no sinkhole network)
 *   other kinds are skipped. */
#pragma once

#define FUZZ_VERDICT_HEADER 16

#define FUZZ_VERDICT_COMPLETE 0x01
#define FUZZ_VERDICT_TRAILER 0x02

enum {
  FUZZ_VERDICT_PART_EVENT = 1,
  FUZZ_VERDICT_PART_PCAP = 2,
  FUZZ_VERDICT_PART_POLICY = 3,
  FUZZ_VERDICT_PART_LOG = 4,
  FUZZ_VERDICT_PART_SINKHOLE = 5,
};

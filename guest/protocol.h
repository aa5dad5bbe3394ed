/* airlock evidence-channel protocol.
 *
 * This one header is shared by the guest programs (static C, no GLib) and the
 * host library (lib/evidence).  It describes bytes only: no pointers, no
 * host-side types.  Every multi-byte integer on the wire is little-endian.
 *
 * The channel is the virtio-serial port AIRLOCK_PORT_EVIDENCE.  The host speaks
 * first: it sends one struct airlock_host_hello carrying a fresh random nonce.
 * The guest waits for it before it writes anything, because bytes a guest
 * writes before the host side is connected can be dropped by QEMU.
 *
 * After that only the guest writes, as a sequence of frames:
 *
 *   frame   = header payload
 *   header  = magic[4] "ALKF" | version u8 | type u8 | length u16 | seq u64
 *   payload = length bytes, a sequence of TLVs
 *   tlv     = tag u16 | len u16 | value[len]
 *
 * seq is 0 for the hello and grows by exactly one per frame.  length is at most
 * AIRLOCK_FRAME_MAX_PAYLOAD; the host never trusts it beyond that bound.
 *
 *   HELLO      first frame; echoes the nonce, describes the guest
 *   HEARTBEAT  every heartbeat_ms (from the host hello) until the trailer
 *   LOG        a line of diagnostic text from a trusted guest program
 *   EVENT      a supervisor record (defined with the supervisor)
 *   TRAILER    last frame; counts of what was sent, how the run ended
 *
 * Anything else (unknown type, unknown tag, a TLV running past the payload, a
 * missing mandatory TLV, a duplicate TLV) is malformed, and a malformed frame
 * makes the run inconclusive.  Versions are not negotiated: a version the
 * host does not speak is malformed too.
 */
#ifndef AIRLOCK_PROTOCOL_H
#define AIRLOCK_PROTOCOL_H

#include <stdint.h>

#define AIRLOCK_PORT_EVIDENCE "org.airlock.evidence.0"
#define AIRLOCK_PORT_STDIO "org.airlock.stdio.0"

#define AIRLOCK_PROTO_VERSION 1

#define AIRLOCK_NONCE_LEN 32

/* Host → guest, exactly once, 48 bytes. */
#define AIRLOCK_HOST_HELLO_MAGIC "ALKH"
#define AIRLOCK_HOST_HELLO_SIZE 48
struct airlock_host_hello {
  uint8_t magic[4];                  /* "ALKH" */
  uint8_t version;                   /* AIRLOCK_PROTO_VERSION */
  uint8_t flags;                     /* 0; reserved */
  uint16_t reserved;                 /* 0 */
  uint32_t heartbeat_ms;             /* period the guest must keep */
  uint32_t reserved2;                /* 0 */
  uint8_t nonce[AIRLOCK_NONCE_LEN];  /* fresh per run */
} __attribute__ ((packed));

_Static_assert (sizeof (struct airlock_host_hello) == AIRLOCK_HOST_HELLO_SIZE,
                "host hello is 48 bytes on the wire");

/* Guest → host frames. */
#define AIRLOCK_FRAME_MAGIC "ALKF"
#define AIRLOCK_FRAME_HEADER_SIZE 16
/* Bounded so a hostile length can never make the host buffer more than this
 * per frame; large enough for an argv-carrying supervisor record. */
#define AIRLOCK_FRAME_MAX_PAYLOAD 16384
#define AIRLOCK_TLV_HEADER_SIZE 4

struct airlock_frame_header {
  uint8_t magic[4];  /* "ALKF" */
  uint8_t version;   /* AIRLOCK_PROTO_VERSION */
  uint8_t type;      /* enum airlock_frame_type */
  uint16_t length;   /* payload bytes, <= AIRLOCK_FRAME_MAX_PAYLOAD */
  uint64_t seq;      /* 0 for the hello, then +1 per frame */
} __attribute__ ((packed));

_Static_assert (sizeof (struct airlock_frame_header) == AIRLOCK_FRAME_HEADER_SIZE,
                "frame header is 16 bytes on the wire");

enum airlock_frame_type {
  AIRLOCK_FRAME_HELLO = 1,
  AIRLOCK_FRAME_HEARTBEAT = 2,
  AIRLOCK_FRAME_TRAILER = 3,
  AIRLOCK_FRAME_LOG = 4,
  AIRLOCK_FRAME_EVENT = 5,
};

/* TLV tags.  Integers are little-endian and exactly the size given;
 * strings are raw bytes without a terminating NUL. */
enum airlock_tlv_tag {
  /* HELLO */
  AIRLOCK_TLV_NONCE = 1,           /* 32 bytes, echo of the host nonce (mandatory) */
  AIRLOCK_TLV_ARCH = 2,            /* string: uname machine, "x86_64" / "aarch64" (mandatory) */
  AIRLOCK_TLV_KERNEL_RELEASE = 3,  /* string: uname release (mandatory) */
  AIRLOCK_TLV_BUILD_ID = 4,        /* bytes: GNU build id of the guest init (mandatory) */
  AIRLOCK_TLV_UPTIME_NS = 5,       /* u64: guest CLOCK_BOOTTIME at send (hello, heartbeat: mandatory) */
  AIRLOCK_TLV_SECOND_OPEN_ERRNO = 6, /* u32: errno of a second open of the evidence
                                      * port, tried right after the first (hello:
                                      * mandatory; EBUSY proves exclusivity) */
  /* TRAILER (all mandatory) */
  AIRLOCK_TLV_FRAME_COUNT = 7,     /* u64: frames sent before the trailer */
  AIRLOCK_TLV_HEARTBEAT_COUNT = 8, /* u64: heartbeats sent */
  AIRLOCK_TLV_EVENT_COUNT = 9,     /* u64: EVENT frames sent */
  AIRLOCK_TLV_EXIT_STATUS = 10,    /* u32: workload wait status (0 when none ran) */
  AIRLOCK_TLV_END_REASON = 11,     /* u32: enum airlock_end_reason */
  /* LOG (mandatory there) */
  AIRLOCK_TLV_MESSAGE = 12,        /* string */
};

enum airlock_end_reason {
  AIRLOCK_END_COMPLETED = 1,  /* the workload (or the boot check) finished */
  AIRLOCK_END_TIMEOUT = 2,    /* the run's time limit ended it */
  AIRLOCK_END_ERROR = 3,      /* a trusted guest program failed; see LOG frames */
};

/* Kernel command line keys the host sets and the guest init reads.  The
 * command line belongs to the host: nothing in the guest can change it. */
#define AIRLOCK_CMDLINE_RUN_MS "airlock.run_ms="  /* heartbeat this long, then trailer */
/* Test-only misbehaviour, used by tests/vm to prove the host's checks:
 * wrong-nonce, seq-gap, oversize, unknown-type, no-heartbeat, no-trailer, panic. */
#define AIRLOCK_CMDLINE_TEST "airlock.test="

#endif /* AIRLOCK_PROTOCOL_H */

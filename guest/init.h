/* Internals of PID 1, shared by its parts: init.c (the boot, in order,
 * and the fatal-error policy), io.c, cmdline.c, modules.c, handshake.c,
 * channel.c and test-modes.c.  What the supervisor also uses is in
 * guest.h. */
#ifndef AIRLOCK_INIT_H
#define AIRLOCK_INIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/utsname.h>

#include "guest.h"

#define LOG_PREFIX "airlock-init: "

/* Ports appear asynchronously (the port name arrives from the host in a
 * control message handled on a workqueue): poll, don't spin. */
#define POLL_INTERVAL_MS 10
#define PORT_WAIT_MS 10000
#define BUILD_ID_MAX 64

/* Test-only misbehaviour, selected by airlock.test=MODE on the kernel
 * command line.  tests/vm uses these to prove the host detects each anomaly
 * the protocol defines.  They are not a way for the image to weaken the
 * evidence: the command line belongs to the host (it is part of the libvirt
 * domain the host defines), and nothing in the guest, trusted or not, can
 * change it after boot.  A mode this init does not know is a fatal error. */
enum test_mode {
  TEST_NONE,
  TEST_WRONG_NONCE,   /* flip one byte of the echoed nonce */
  TEST_SEQ_GAP,       /* after frame 2 (the boot check: its second heartbeat), skip
                       * one sequence number */
  TEST_OVERSIZE,      /* after hello, a header claiming MAX_PAYLOAD+1 bytes */
  TEST_UNKNOWN_TYPE,  /* after hello, a frame of type 99 */
  TEST_NO_HEARTBEAT,  /* after hello, silence until the host destroys the VM */
  TEST_NO_TRAILER,    /* heartbeat normally, power off without a trailer */
  TEST_PANIC,         /* after hello, crash the kernel */
  TEST_PANIC_MID_RUN, /* crash the kernel while the workload runs: at its second
                       * heartbeat after WORKLOAD_START of the workload phase (or
                       * its exit, if that comes first); the boot check: at its
                       * second heartbeat */
  TEST_GARBAGE,       /* after hello, random bytes instead of frames, then power off */
  TEST_REPLAY_FRAME,  /* the first EVENT frame (the boot check: the first heartbeat)
                       * is sent again, byte for byte with its own sequence number,
                       * before the next heartbeat or the trailer */
  TEST_STALE_NONCE,   /* stale-nonce=HEX: the hello echoes HEX (64 hex digits: a
                       * previous run's nonce, from its bundle's manifest) instead of
                       * this run's: the replay of a recorded session's hello */
  TEST_SKIP_CONTROL,  /* skip-control=NAME/FAMILY: the negative-control probe skips
                       * that control (the gate must then fail, naming it) */
  TEST_UNSUPERVISED,  /* benchmarks only: run the workload without the seccomp
                       * filter (the floor for bench/supervisor, and the only
                       * way strace can run); said in a LOG frame */
  TEST_HOOKS_RING_MIN, /* the kernel-hook recorder's ring is one page: a record with
                        * a payload (a send to port 53) never fits, so the LSM hook
                        * must refuse that send and the kprobe count it lost
                        * (guest/hooks.h) */
  TEST_HOOKS_RING_STALL, /* the ring is one page and PID 1 reads it only at the
                          * phase's end: the workload's connects fill it, and
                          * the next is refused (LSM) or counted lost (kprobe) */
  TEST_HOOKS_OFF,     /* the kernel-hook recorder is not started: the supervisor
                       * records every call, as under a kernel without BPF LSM or
                       * BTF (its fallback, tested and benched on the pinned
                       * kernels) */
  TEST_UNKNOWN,       /* a mode this init does not know: fatal */
};

/* What the host asked for on the kernel command line. */
struct boot_config {
  uint32_t run_ms;
  enum test_mode test;
  char test_name[96];
  char test_arg[80];   /* the value of a test mode that takes one */
  uint8_t stale_nonce[AIRLOCK_NONCE_LEN];   /* TEST_STALE_NONCE: test_arg decoded */
  /* A malformed command line is reported only once the host can hear it
   * (after the guest hello), so the host sees why the run failed. */
  char error[200];
};

/* What the guest hello says about this guest, gathered before the host
 * speaks so nothing between the two hellos can fail but the write. */
struct guest_identity {
  struct utsname uts;
  uint8_t build_id[BUILD_ID_MAX];
  size_t build_id_len;
};

struct host_hello {
  uint8_t magic[4];      /* as received, for the message when it is wrong */
  uint8_t version;
  uint32_t heartbeat_ms;
  uint32_t spec_length;  /* run spec bytes that followed the hello (0: boot check) */
  uint8_t nonce[AIRLOCK_NONCE_LEN];
};

/* The evidence channel.  Global because die() must be able to close the
 * stream from anywhere. */
struct channel {
  int fd;               /* the evidence port, -1 until opened */
  bool host_spoke;      /* a valid host hello arrived: the guest may write */
  uint64_t seq;         /* sequence number of the next frame */
  uint64_t frames_sent; /* equal to seq unless TEST_SEQ_GAP skipped one */
  uint64_t heartbeats_sent;
  uint64_t events_sent;
};

/* The test modes that act inside channel_send(), because they must act
 * wherever a frame is sent from (the supervisor's threads included).  Like
 * every test mode they come from the host's kernel command line only:
 * @test is copied from it by main() before any other thread exists, so no
 * frame, spec or workload can switch one on.  The rest is under
 * channel_lock. */
struct channel_misbehaviour {
  enum test_mode test;
  bool gap_done;              /* TEST_SEQ_GAP */
  bool panic_armed;           /* TEST_PANIC_MID_RUN: the workload runs */
  unsigned panic_heartbeats;  /* heartbeats due since it was armed */
  uint8_t replay_type;        /* TEST_REPLAY_FRAME: EVENT with a spec, else HEARTBEAT */
  bool replayed;
  size_t replay_len;          /* 0 until the frame to replay was sent */
  uint8_t replay[AIRLOCK_FRAME_HEADER_SIZE + AIRLOCK_FRAME_MAX_PAYLOAD];
};


/* init.c */
/* Reports @fmt on the console and, once the host has spoken, on the
 * channel with an error trailer; then powers off. */
__attribute__ ((noreturn, format (printf, 1, 2))) void die (const char *fmt, ...);

/* cmdline.c */
void read_boot_config (struct boot_config *cfg);

/* modules.c */
enum module_phase { MODULES_FOR_PORT, MODULES_AFTER_HELLO };
unsigned load_modules (enum module_phase phase);

/* handshake.c */
/* The run spec, read right after the host hello. */
extern uint8_t spec_bytes[AIRLOCK_SPEC_MAX];
int read_guest_identity (struct guest_identity *id);
int read_host_hello (int fd, struct host_hello *ret);

/* channel.c */
extern struct channel channel;
int channel_send_hello (const struct guest_identity *id, const uint8_t nonce[AIRLOCK_NONCE_LEN],
                        uint32_t second_open_errno, uint32_t recorder);
/* @has_lost: the kprobe recorder ran, and @lost records are its losses. */
int channel_send_trailer (uint32_t exit_status, uint32_t end_reason, bool has_lost, uint64_t lost);
/* Reads the evidence port until the host's AIRLOCK_HOST_RECEIPT (a tick
 * still queued is passed over).  0, or -errno (-ECONNRESET: no host). */
int channel_await_receipt (void);

/* channel.c: the test modes that act on the frames channel_send() sends. */
extern struct channel_misbehaviour misbehaviour;
int64_t frame_get_u32 (const uint8_t *bytes, size_t len, uint16_t tag);
/* Crashes the kernel; returns only when that failed, with -errno (-EIO:
 * sysrq 'c' was taken and the kernel did not crash). */
int crash_kernel (void);
bool panic_due (const uint8_t *bytes, size_t len);

/* test-modes.c: those that act right after the hello.  Returns 0 for the
 * modes that act later (or not at all), -errno with a sentence in @error
 * when the misbehaviour itself failed (then PID 1 dies with it). */
int misbehave_after_hello (enum test_mode test, char *error, size_t error_size);

#endif /* AIRLOCK_INIT_H */

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
 *   EVENT      a supervisor record: a traced system call (what the workload
 *              asked for, written before the call proceeds), the result of a
 *              call the supervisor performed, or the workload's start and end
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
/* The guest's network when its hypervisor is remote (AIRLOCK_SPEC_NET_PORT):
 * the frames a NIC would carry, each a 4-byte big-endian length and then
 * the Ethernet frame (QEMU's stream netdev's framing), both directions. */
#define AIRLOCK_PORT_NET "org.airlock.net.0"
/* The guest's one NIC (or, on AIRLOCK_PORT_NET, its tap): the domain gives
 * it this MAC, the sinkhole takes it as the guest's own. */
#define AIRLOCK_NET_GUEST_MAC "52:54:00:a1:10:0c"

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
  uint32_t spec_length;              /* bytes of run spec that follow (0: boot check) */
  uint8_t nonce[AIRLOCK_NONCE_LEN];  /* fresh per run */
} __attribute__ ((packed));

/* The run spec: spec_length bytes of TLVs (the frame TLV encoding) right
 * after the host hello, at most AIRLOCK_SPEC_MAX.  It tells the supervisor
 * what to run.  It is host → guest and the host is trusted, but the guest
 * still rejects a spec it cannot parse (LOG + error trailer).  The host
 * seeds the hash chain with the hello and the spec, so the evidence is bound
 * to the exact case that was asked for. */
#define AIRLOCK_SPEC_MAX 65536

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
  AIRLOCK_TLV_RECORDER = 14,       /* u32: enum airlock_recorder, what records this boot's
                                    * workloads (hello: present iff the host sent a run
                                    * spec and the workload runs supervised) */
  /* TRAILER (all mandatory) */
  AIRLOCK_TLV_FRAME_COUNT = 7,     /* u64: frames sent before the trailer */
  AIRLOCK_TLV_HEARTBEAT_COUNT = 8, /* u64: heartbeats sent */
  AIRLOCK_TLV_EVENT_COUNT = 9,     /* u64: EVENT frames sent */
  AIRLOCK_TLV_EXIT_STATUS = 10,    /* u32: workload wait status (0 when none ran) */
  AIRLOCK_TLV_END_REASON = 11,     /* u32: enum airlock_end_reason */
  AIRLOCK_TLV_RECORDS_LOST = 15,   /* u64: sends and connects the kernel-hook recorder
                                    * saw but could not record, and connect outcomes it
                                    * could not record (its ring was full); present when
                                    * the kprobe recorder ran (AIRLOCK_RECORDER_KPROBE) or
                                    * any was lost: more than 0 makes the run
                                    * inconclusive */
  /* LOG (mandatory there) */
  AIRLOCK_TLV_MESSAGE = 12,        /* string */
  /* EVENT: WORKLOAD_START and WORKLOAD_EXIT (mandatory there) */
  AIRLOCK_TLV_EV_PHASE = 13,       /* u32: enum airlock_phase; SYSCALL and RESULT events
                                    * belong to the phase whose START came last */

  /* EVENT.  Mandatory in every event: KIND, TIME_NS.  Per kind:
   *   SYSCALL         ACTION, SYSCALL, AUDIT_ARCH, ARGS, PID, TID; REASON iff
   *                   ACTION is DENY; the rest when they apply and could be read
   *   RESULT          REF, RESULT
   *   WORKLOAD_START  PID (the workload's reaper, pid 1 of its namespace)
   *   WORKLOAD_EXEC   PHASE, RESULT (0: the entrypoint's execve succeeded, else -errno of
   *                   the step that failed); PATH (what was executed, or argv[0]), NSPID
   *                   (the entrypoint, in the workload's namespace), NOTE (what failed)
   *   WORKLOAD_EXIT   EXIT_STATUS
   * Addresses are sent as the raw bytes the workload passed (the host decodes
   * them by the kernel's rules); nothing is rendered to text in the guest. */
  AIRLOCK_TLV_EV_KIND = 32,        /* u32: enum airlock_event_kind */
  AIRLOCK_TLV_EV_TIME_NS = 33,     /* u64: guest CLOCK_BOOTTIME when the call was seen */
  AIRLOCK_TLV_EV_ACTION = 34,      /* u32: enum airlock_event_action */
  AIRLOCK_TLV_EV_REASON = 35,      /* u32: enum airlock_deny_reason */
  AIRLOCK_TLV_EV_SYSCALL = 36,     /* u32: system call number as the kernel saw it */
  AIRLOCK_TLV_EV_AUDIT_ARCH = 37,  /* u32: AUDIT_ARCH_* of the call (foreign ABIs differ) */
  AIRLOCK_TLV_EV_ARGS = 38,        /* 6 x u64: the raw arguments */
  AIRLOCK_TLV_EV_PID = 39,         /* u32: thread group id, guest's initial pid namespace */
  AIRLOCK_TLV_EV_TID = 40,         /* u32: thread id, same namespace */
  AIRLOCK_TLV_EV_PPID = 41,        /* u32: parent's pid, same namespace */
  AIRLOCK_TLV_EV_NSPID = 42,       /* u32: pid inside the workload's namespace */
  AIRLOCK_TLV_EV_UID = 43,         /* u32: real uid */
  AIRLOCK_TLV_EV_GID = 44,         /* u32: real gid */
  AIRLOCK_TLV_EV_EXE = 45,         /* string: /proc/PID/exe, at most 4096 bytes */
  AIRLOCK_TLV_EV_ARGV = 46,        /* bytes: /proc/PID/cmdline (NUL-separated), at most 4096 */
  AIRLOCK_TLV_EV_FD = 47,          /* u32: the socket fd the call names */
  AIRLOCK_TLV_EV_SOCKET = 48,      /* 3 x u32: family, type (no flags), protocol */
  AIRLOCK_TLV_EV_SOCK_ID = 49,     /* u64: socket inode number (one socket, across dups) */
  AIRLOCK_TLV_EV_ADDR = 50,        /* bytes: the sockaddr passed, min(addrlen, 128) bytes */
  AIRLOCK_TLV_EV_ADDRLEN = 51,     /* u32: addrlen / msg_namelen as passed */
  AIRLOCK_TLV_EV_PEER = 52,        /* bytes: getpeername() of a connected socket used
                                    * without an address (the earlier connect's peer) */
  AIRLOCK_TLV_EV_MSG_FLAGS = 53,   /* u32: send flags */
  AIRLOCK_TLV_EV_MSG_INDEX = 54,   /* 2 x u32: entry index and vlen, for sendmmsg */
  AIRLOCK_TLV_EV_PAYLOAD = 55,     /* bytes: first bytes of the data sent, only when the
                                    * destination port is 53 (DNS), at most 4096 */
  AIRLOCK_TLV_EV_PAYLOAD_LEN = 56, /* u64: bytes of data the call asked to send */
  AIRLOCK_TLV_EV_PATH = 57,        /* string: execve/execveat path, at most 4096 */
  AIRLOCK_TLV_EV_REF = 58,         /* u64: seq of the SYSCALL frame a RESULT belongs to */
  AIRLOCK_TLV_EV_RESULT = 59,      /* u64: return value, or -errno, as two's complement */
  AIRLOCK_TLV_EV_EXIT_STATUS = 60, /* u32: wait status of the entrypoint */
  AIRLOCK_TLV_EV_NOTE = 61,        /* string: why something is missing ("process gone", …);
                                    * once per event like every tag: several reasons are
                                    * joined with "; ", at most AIRLOCK_EV_NOTE_MAX bytes */
  AIRLOCK_TLV_EV_LOCAL = 62,       /* bytes: getsockname() of the socket, where useful */
  AIRLOCK_TLV_EV_EXEC_ARGV = 63,   /* bytes: the argv an execve/execveat passes, NUL-separated,
                                    * at most 4096 */

  /* Run spec (host → guest, after the hello; see AIRLOCK_SPEC_MAX). */
  AIRLOCK_SPEC_ARG = 96,           /* string, repeated: argv in order (at least argv[0]) */
  AIRLOCK_SPEC_ENV = 97,           /* string "NAME=VALUE", repeated: the whole environment */
  AIRLOCK_SPEC_CWD = 98,           /* string: absolute working directory (default "/") */
  AIRLOCK_SPEC_UID = 99,           /* u32 (default 0) */
  AIRLOCK_SPEC_GID = 100,          /* u32 (default 0) */
  AIRLOCK_SPEC_GROUPS = 101,       /* n x u32: supplementary groups (default none) */
  AIRLOCK_SPEC_ROOT = 102,         /* string: guest path of the workload's root (mandatory) */
  AIRLOCK_SPEC_TIMEOUT_MS = 103,   /* u32: end the run after this long (mandatory, > 0) */
  AIRLOCK_SPEC_HOSTNAME = 104,     /* string: the workload's hostname (default "airlock") */
  AIRLOCK_SPEC_ROOT_DISK = 105,    /* string: serial of a virtio disk holding an ext4 root
                                    * filesystem; the guest mounts it read-only at ROOT */
  AIRLOCK_SPEC_USER = 106,         /* string: "name", "uid", "name:group", "uid:gid", resolved
                                    * against the workload root's /etc/passwd and /etc/group
                                    * (overrides UID/GID/GROUPS) */
  AIRLOCK_SPEC_STDIO = 107,        /* u32: 1 = the workload's stdio is on AIRLOCK_PORT_STDIO
                                    * (0/absent: stdin /dev/null, output to the console) */
  AIRLOCK_SPEC_CONTROLS = 108,     /* u32: 1 = run the negative-control probe first, in the
                                    * same boot (its records carry phase CONTROLS) */
  AIRLOCK_SPEC_CLOCK_NS = 109,     /* u64: set CLOCK_REALTIME to this (ns since the epoch)
                                    * before anything runs, so a replayed run sees the
                                    * recorded run's wall clock (absent: QEMU's RTC) */
  AIRLOCK_SPEC_TTY = 110,          /* 2 x u16: rows, cols.  Needs STDIO: the workload's stdin,
                                    * stdout and stderr are the slave of a pseudo-terminal made in
                                    * its own devpts, and its controlling terminal; the master
                                    * stays with PID 1, which relays it as one STDOUT stream (no
                                    * STDERR chunks) and applies the host's WINSIZE chunks */
  AIRLOCK_SPEC_SHELL = 111,        /* string: a guest directory of airlock's own holding bin/sh
                                    * (a static shell).  When argv[0] (absolute) is no executable
                                    * file in the workload's root, that directory is bound there
                                    * read-only at /.airlock and argv[0] becomes /.airlock/bin/sh
                                    * (a LOG frame says which ran; `airlock shell`) */
  AIRLOCK_SPEC_WARP = 112,         /* u32: 1 = the guest's clock is warped (QEMU's
                                    * -icount shift=2,sleep=off: while every vCPU is idle the
                                    * clock jumps to the next timer).  TIMEOUT_MS is then a
                                    * limit of guest time; the supervisor's heartbeats answer
                                    * the host's ticks and the host's stop ends the workload
                                    * (AIRLOCK_HOST_TICK, AIRLOCK_HOST_STOP); after each network
                                    * call the clock is held to the guest's instructions for a
                                    * while, so no answer is outrun (guest/clock-hold.c) */
  AIRLOCK_SPEC_NET_PORT = 113,     /* u32: 1 = the guest's network is AIRLOCK_PORT_NET, not a
                                    * NIC: PID 1 makes a tap with the NIC's MAC
                                    * (AIRLOCK_NET_GUEST_MAC) and relays its frames on the port
                                    * (guest/net-port.c); a remote hypervisor's QEMU cannot
                                    * reach the host's network socket, a channel it can */
  AIRLOCK_SPEC_STOP_SIGNAL = 114,  /* u32, 1..64: the signal a time limit sends every process
                                    * of the workload first (the image's StopSignal; absent:
                                    * SIGTERM), as `docker stop` does; what they do in the
                                    * grace that follows (AIRLOCK_STOP_GRACE_MS) is recorded,
                                    * and whatever is left then is killed */
};

/* How long the workload has to end after its stop signal (guest/supervisor.c),
 * as `docker stop`'s default: of guest time, and under a warped clock at most
 * as many host ticks (AIRLOCK_HOST_TICK) too, so a busy workload's grace stays
 * within the host's margin after its wall-time limit. */
#define AIRLOCK_STOP_GRACE_MS 10000

/* Host → guest after the run spec, in a run whose spec has WARP: single
 * bytes.  A warped guest's timers cannot pace its heartbeats: a period of
 * guest time is no bound on wall time (idle, hours pass at once; busy,
 * the clock follows the instructions executed), and a heartbeat every
 * 200 ms of guest time would cost a wake-up, a frame and a host read per
 * 200 ms of the hours a sleeping workload skips.  So the host's wall clock
 * paces them: the host sends a TICK every heartbeat_ms from the guest's
 * hello on, and while a workload runs the supervisor answers every batch
 * of ticks it reads with one HEARTBEAT.  STOP: the host's wall-time limit
 * passed; the supervisor ends the workload as at its own time limit and
 * the trailer says AIRLOCK_END_WALL_LIMIT.  Any byte but STOP is a tick. */
#define AIRLOCK_HOST_TICK 'T'
#define AIRLOCK_HOST_STOP 'S'

/* Host → guest, in every run: the host has read the trailer.  The guest
 * powers off only when it reads this byte (or finds no host on the port):
 * through a daemon the last bytes of the channel can still be on their way
 * when QEMU exits, and a stream that ends with the domain loses them (seen
 * over qemu+ssh: the trailer and the frames before it never reached the
 * host, and a run that had completed was inconclusive).  The host destroys
 * a domain that has not stopped soon after the trailer, so a receipt that
 * does not come costs no more than that. */
#define AIRLOCK_HOST_RECEIPT 'R'

/* The longest EV_NOTE value.  The supervisor joins a record's reasons into
 * one note and cuts it here (guest/record.c), because a second NOTE, like any
 * repeated tag, is malformed. */
#define AIRLOCK_EV_NOTE_MAX 1024

/* Workload stdio on AIRLOCK_PORT_STDIO, both directions, as chunks:
 *   stream u8 (enum airlock_stdio_stream) | flags u8 | length u16 | bytes
 * The host sends stdin and ends it with an AIRLOCK_STDIO_EOF chunk; the
 * guest sends stdout and stderr chunks and an EOF chunk for each when the
 * workload's last writer closed it.  This port is the workload's, not
 * evidence: the host trusts nothing on it and bounds what it keeps.
 * With AIRLOCK_SPEC_TTY the guest sends the terminal's output as STDOUT
 * (EOF once no process has the terminal open), the host may send WINSIZE
 * chunks, and its stdin EOF becomes the terminal's end-of-file character. */
#define AIRLOCK_STDIO_HEADER_SIZE 4
#define AIRLOCK_STDIO_CHUNK_MAX 4096
#define AIRLOCK_STDIO_EOF 1

enum airlock_stdio_stream {
  AIRLOCK_STDIO_STDIN = 0,
  AIRLOCK_STDIO_STDOUT = 1,
  AIRLOCK_STDIO_STDERR = 2,
  AIRLOCK_STDIO_WINSIZE = 3,   /* host → guest, TTY runs only: rows u16 | cols u16 (4 bytes) */
};

enum airlock_event_kind {
  AIRLOCK_EVENT_SYSCALL = 1,         /* a traced call, written before it proceeds */
  AIRLOCK_EVENT_RESULT = 2,          /* the outcome of a call the supervisor performed */
  AIRLOCK_EVENT_WORKLOAD_START = 3,  /* the workload's namespaces exist; its entrypoint follows */
  AIRLOCK_EVENT_WORKLOAD_EXIT = 4,   /* the entrypoint exited and its process tree is gone */
  AIRLOCK_EVENT_WORKLOAD_EXEC = 5,   /* whether the entrypoint's execve succeeded: a pass needs
                                      * proof the image's own program ran, not just that a
                                      * process was forked for it */
};

enum airlock_phase {
  AIRLOCK_PHASE_CONTROLS = 1,   /* the negative-control probe */
  AIRLOCK_PHASE_WORKLOAD = 2,   /* what the spec asked for */
};

enum airlock_event_action {
  AIRLOCK_ACTION_CONTINUE = 1,  /* the kernel runs the call as the workload made it */
  AIRLOCK_ACTION_DENY = 2,      /* the workload got an error; nothing happened */
  AIRLOCK_ACTION_EMULATE = 3,   /* the supervisor made the call itself, with the bytes it
                                 * recorded (no time-of-check/time-of-use gap); a RESULT
                                 * event follows */
};

/* Why a call was denied.  The workload gets the errno in parentheses. */
enum airlock_deny_reason {
  AIRLOCK_DENY_FOREIGN_ABI = 1,     /* i386 on x86_64, AArch32 on arm64 (ENOSYS) */
  AIRLOCK_DENY_X32 = 2,             /* x32 system call numbers (ENOSYS) */
  AIRLOCK_DENY_IO_URING = 3,        /* io_uring_setup/enter/register (ENOSYS) */
  AIRLOCK_DENY_RAW_SOCKET = 4,      /* SOCK_RAW in inet/inet6 (EPERM); netlink's SOCK_RAW
                                     * is how glibc asks for addresses and stays allowed */
  AIRLOCK_DENY_PACKET_SOCKET = 5,   /* AF_PACKET, or SOCK_PACKET in inet (EPERM) */
  AIRLOCK_DENY_VSOCK = 6,           /* AF_VSOCK (EAFNOSUPPORT) */
  AIRLOCK_DENY_SCTP = 7,            /* IPPROTO_SCTP, SOCK_SEQPACKET in inet (EPROTONOSUPPORT) */
  AIRLOCK_DENY_SOCKET_FAMILY = 8,   /* any family but unix, inet, inet6, netlink, or an inet
                                     * type/protocol pair other than stream tcp/mptcp and
                                     * dgram udp/udplite/icmp/icmpv6 (EAFNOSUPPORT) */
  AIRLOCK_DENY_PTRACE = 9,          /* ptrace (EPERM) */
  AIRLOCK_DENY_PROCESS_VM_WRITEV = 10, /* (EPERM) */
  AIRLOCK_DENY_SECCOMP_LISTENER = 11,  /* a filter with SECCOMP_FILTER_FLAG_NEW_LISTENER (EPERM) */
  AIRLOCK_DENY_CLONE_UNTRACED = 12, /* clone with CLONE_UNTRACED (EPERM) */
  AIRLOCK_DENY_CLONE3 = 13,         /* clone3: its flags live in memory (ENOSYS; libcs fall back to clone) */
  AIRLOCK_DENY_KEYRING = 14,        /* keyctl, add_key, request_key (EPERM) */
  AIRLOCK_DENY_BPF = 15,            /* bpf (EPERM) */
  AIRLOCK_DENY_KERNEL = 16,         /* module loading, kexec, iopl/ioperm, perf_event_open,
                                     * userfaultfd: ways around the supervisor (EPERM) */
};

/* How the supervisor records (docs/supervisor.md).  Both deny the same
 * calls; they differ in where a write on a socket is seen. */
enum airlock_recorder {
  AIRLOCK_RECORDER_SECCOMP = 1,  /* seccomp user notification alone: writes on fds above 2
                                  * are notified and looked at; fds 0-2 and pwritev2 are not */
  AIRLOCK_RECORDER_HOOKS = 2,    /* a BPF LSM program records every write on a socket where
                                  * it reaches the socket (any fd), and seccomp notification
                                  * the rest; a send it cannot record is refused */
  AIRLOCK_RECORDER_KPROBE = 3,   /* the same program on a kprobe (a kernel that cannot attach
                                  * BPF LSM programs: Debian 12's arm64): it cannot refuse a
                                  * send, so one it cannot record is counted in the trailer's
                                  * RECORDS_LOST */
};

enum airlock_end_reason {
  AIRLOCK_END_COMPLETED = 1,  /* the workload (or the boot check) finished */
  AIRLOCK_END_TIMEOUT = 2,    /* the run's time limit (TIMEOUT_MS, guest time) ended it */
  AIRLOCK_END_ERROR = 3,      /* a trusted guest program failed; see LOG frames */
  AIRLOCK_END_WALL_LIMIT = 4, /* the host's wall-time limit ended it (AIRLOCK_HOST_STOP,
                               * a warped clock only) */
};

/* Kernel command line keys the host sets and the guest init reads.  The
 * command line belongs to the host: nothing in the guest can change it. */
#define AIRLOCK_CMDLINE_RUN_MS "airlock.run_ms="  /* heartbeat this long, then trailer */
/* Test-only misbehaviour, used by tests/vm to prove the host's checks:
 * wrong-nonce, seq-gap, oversize, unknown-type, no-heartbeat, no-trailer, panic. */
#define AIRLOCK_CMDLINE_TEST "airlock.test="

#endif /* AIRLOCK_PROTOCOL_H */

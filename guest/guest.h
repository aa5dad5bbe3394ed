/* What the guest programs share: the console, clocks, files and the
 * evidence channel.  Static C, no GLib.  PID 1's parts define these (io.c,
 * handshake.c, channel.c; init.h has what only they share); the supervisor
 * (supervisor.c and its parts, notify.c, filter.c) uses them. */
#ifndef AIRLOCK_GUEST_H
#define AIRLOCK_GUEST_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "protocol.h"
#include "wire.h"

#define NS_PER_MS 1000000ull
#define NS_PER_S 1000000000ull

/* ---- console and time (io.c) ----------------------------------------- */

int write_all (int fd, const void *buf, size_t len);
/* write_all() calling @wait (if not NULL) before each write(2): a partial
 * write's rest waits again (clock-hold.c). */
int write_all_waiting (int fd, const void *buf, size_t len, void (*wait) (int fd));
/* One line "airlock-init: …" to the console; never fails. */
void console_log (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
uint64_t clock_ns (clockid_t clock);
void sleep_until_ns (uint64_t deadline_ns);
void sleep_ms (uint32_t ms);
/* read_file()'s error for a path that is no regular file (a FIFO, a
 * device, a directory): Linux has no EFTYPE, and EINVAL is what a reader
 * of the message would least expect. */
#define EFTYPE_NOT_REGULAR EMEDIUMTYPE
/* Reads all of @path into @buf (NUL-terminated).  Returns the length,
 * -EFBIG when it does not fit in @size - 1 bytes, -EFTYPE_NOT_REGULAR when
 * it is no regular file, or another -errno. */
ssize_t read_file (const char *path, char *buf, size_t size);
/* Writes the printf-style sentence into @error; returns -EINVAL. */
int fail (char *error, size_t size, const char *fmt, ...) __attribute__ ((format (printf, 3, 4)));
/* Powers the VM off (PID 1 only); never returns. */
__attribute__ ((noreturn)) void power_off (void);

/* handshake.c: opens the virtio-serial port named @name (waiting a
 * little for it to appear), storing its device path in @ret_dev.  Returns
 * the fd or -errno (-ETIMEDOUT when no such port appeared). */
int open_port (const char *name, char *ret_dev, size_t size);

/* ---- the evidence channel (channel.c) --------------------------------- */

/* Sends @f (begun with any seq) as the next frame: the sequence number is
 * assigned under the channel's lock, so any thread may send.  A write to a
 * virtio port returns once the host side took the buffer, so when this
 * returns the frame has left the guest.  Stores the seq used in @ret_seq
 * (may be NULL).  Returns 0 or -errno. */
int channel_send (struct wire_frame *f, uint64_t *ret_seq);
int channel_send_heartbeat (void);
/* The evidence port's fd: with a warped clock the supervisor reads the
 * host's ticks and stop from it (AIRLOCK_HOST_TICK, AIRLOCK_HOST_STOP). */
int channel_port (void);
int channel_send_log (const char *message);
/* printf-style LOG frame, also echoed to the console. */
void channel_logf (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

/* ---- the supervisor (supervisor.c) ------------------------------------ */

/* How the run ended, for the trailer. */
struct run_result {
  uint32_t exit_status;  /* wait status of the workload's entrypoint; 0 when none ran */
  uint32_t end_reason;   /* enum airlock_end_reason */
};

/* Runs the workload the host's run spec (@spec, @spec_len bytes of TLVs)
 * describes, under the supervisor, keeping heartbeats every @heartbeat_ms.
 * Without @filter (a benchmark floor only) the workload runs unfiltered.
 * @skip_control (tests only, or NULL): the negative-control probe skips
 * that control ("NAME/FAMILY", the probe's --skip).  The kernel-hook
 * recorder (hooks.h), if any, was started before the hello.
 * Returns 0 and fills @ret (main() then sends the trailer), or -errno with
 * a sentence in @error (main() reports it and sends an error trailer). */
int supervisor_run (const uint8_t *spec, size_t spec_len, uint32_t heartbeat_ms, bool filter,
                    const char *skip_control, struct run_result *ret, char *error,
                    size_t error_size);

#endif /* AIRLOCK_GUEST_H */

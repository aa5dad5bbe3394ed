/* The small helpers every part of PID 1 uses (guest.h): whole writes, a
 * line on the console, clocks and sleeps, reading a whole file, an error
 * sentence, powering off. */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "init.h"

/* ---- console ---------------------------------------------------------- */

int
write_all (int fd, const void *buf, size_t len)
{
  return write_all_waiting (fd, buf, len, NULL);
}

int
write_all_waiting (int fd, const void *buf, size_t len, void (*wait) (int fd))
{
  const uint8_t *p = buf;

  while (len > 0)
    {
      ssize_t n;

      if (wait)
        wait (fd);
      n = write (fd, p, len);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return -errno;
      if (n == 0)
        return -EIO;   /* would loop forever otherwise */
      p += n;
      len -= (size_t) n;
    }
  return 0;
}

/* One line to the console (fd 2, see setup_console()); errors are ignored
 * because there is nowhere else to report them. */
void
console_log (const char *fmt, ...)
{
  char line[512];
  size_t len = sizeof LOG_PREFIX - 1;
  int saved_errno = errno;
  va_list ap;
  int n;

  memcpy (line, LOG_PREFIX, len);
  va_start (ap, fmt);
  n = vsnprintf (line + len, sizeof line - len - 1, fmt, ap);
  va_end (ap);
  if (n > 0)
    len += (size_t) n < sizeof line - len - 1 ? (size_t) n : sizeof line - len - 2;
  line[len++] = '\n';
  (void) write_all (STDERR_FILENO, line, len);
  errno = saved_errno;
}

/* ---- clocks ----------------------------------------------------------- */

uint64_t
clock_ns (clockid_t clock)
{
  struct timespec ts;

  /* Cannot fail for CLOCK_MONOTONIC / CLOCK_BOOTTIME with a valid pointer. */
  clock_gettime (clock, &ts);
  return (uint64_t) ts.tv_sec * NS_PER_S + (uint64_t) ts.tv_nsec;
}

/* Sleeps until @deadline_ns on CLOCK_MONOTONIC.  An absolute deadline, so
 * a schedule of deadlines does not drift by the time spent between them. */
void
sleep_until_ns (uint64_t deadline_ns)
{
  struct timespec ts = {
    .tv_sec = (time_t) (deadline_ns / NS_PER_S),
    .tv_nsec = (long) (deadline_ns % NS_PER_S),
  };

  while (clock_nanosleep (CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
    ;
}

void
sleep_ms (uint32_t ms)
{
  sleep_until_ns (clock_ns (CLOCK_MONOTONIC) + ms * NS_PER_MS);
}

/* ---- files ------------------------------------------------------------ */

/* Reads all of @path into @buf and NUL-terminates it.  Returns the length,
 * -EFBIG when it does not fit in @size - 1 bytes, -EFTYPE_NOT_REGULAR when
 * it is no regular file, or another -errno.  The image controls some of
 * these paths (/etc/passwd): a FIFO there must not hold us until someone
 * writes it, nor a device be read (O_NONBLOCK, then the type). */
ssize_t
read_file (const char *path, char *buf, size_t size)
{
  size_t len = 0;
  ssize_t r;
  char extra;
  struct stat st;
  int fd = open (path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

  if (fd < 0)
    return -errno;
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode))
    {
      close (fd);
      return -EFTYPE_NOT_REGULAR;
    }
  for (;;)
    {
      /* Once @buf is full, one more byte tells a file that fits exactly
       * from one that does not. */
      bool full = len == size - 1;
      ssize_t n = full ? read (fd, &extra, 1) : read (fd, buf + len, size - 1 - len);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          r = -errno;
          break;
        }
      if (n == 0)
        {
          buf[len] = '\0';
          r = (ssize_t) len;
          break;
        }
      if (full)
        {
          r = -EFBIG;
          break;
        }
      len += (size_t) n;
    }
  close (fd);
  return r;
}

/* ---- errors and the end ------------------------------------------------ */

__attribute__ ((format (printf, 3, 4))) int
fail (char *error, size_t size, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (error, size, fmt, ap);
  va_end (ap);
  return -EINVAL;
}

__attribute__ ((noreturn)) void
power_off (void)
{
  sync ();
  reboot (RB_POWER_OFF);
  /* Only reachable without CAP_SYS_BOOT, which PID 1 has.  Exiting makes
   * the kernel panic, which at least stops the VM (panic=-1, -no-reboot). */
  console_log ("cannot power off: %s; exiting so the kernel panics", strerror (errno));
  _exit (1);
}

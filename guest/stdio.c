/* The workload's output and input: its output copied to the console a
 * line at a time (no stdio port), or its stdio relayed over the stdio
 * port, from pipes or from the master of its terminal, each in a thread of
 * PID 1.  Part of the supervisor (supervisor.c). */
#define _GNU_SOURCE

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "supervisor.h"
#include "workload.h"

static void
relay_flush (struct relay *rl)
{
  if (rl->len == 0)
    return;
  console_log ("workload: %.*s", (int) rl->len, rl->line);
  rl->len = 0;
}

bool
relay_output (int fd, struct relay *rl)
{
  char buf[4096];
  ssize_t n = read (fd, buf, sizeof buf);

  if (n < 0)
    return errno == EINTR || errno == EAGAIN;
  if (n == 0)
    {
      relay_flush (rl);
      return false;
    }
  for (ssize_t i = 0; i < n; i++)
    {
      if (buf[i] == '\n')
        {
          relay_flush (rl);
          continue;
        }
      /* Control characters would let the workload forge console lines
       * (a bare \r, escape sequences). */
      rl->line[rl->len++] = buf[i] == '\t' ? ' ' : (buf[i] >= 0x20 && buf[i] < 0x7f) ? buf[i] : '?';
      if (rl->len == sizeof rl->line)
        relay_flush (rl);
    }
  return true;
}

static int
stdio_send (struct stdio_relay *sr, uint8_t stream, uint8_t flags, const void *data, size_t len)
{
  uint8_t chunk[AIRLOCK_STDIO_HEADER_SIZE + AIRLOCK_STDIO_CHUNK_MAX];

  chunk[0] = stream;
  chunk[1] = flags;
  wire_le16 (chunk + 2, (uint16_t) len);
  memcpy (chunk + AIRLOCK_STDIO_HEADER_SIZE, data, len);
  sr->bytes_out += len;
  return clock_hold_write_all (sr->port, chunk, AIRLOCK_STDIO_HEADER_SIZE + len);
}

void *
stdio_main (void *data)
{
  struct stdio_relay *sr = data;
  static uint8_t rx[AIRLOCK_STDIO_HEADER_SIZE + AIRLOCK_STDIO_CHUNK_MAX];
  static uint8_t inbuf[64 * 1024];
  size_t rx_len = 0, in_len = 0;
  bool port_open = true, stdin_eof = false;

  while (sr->out_r >= 0 || sr->err_r >= 0)
    {
      struct pollfd fds[4] = {
        { .fd = port_open && !stdin_eof && in_len < sizeof inbuf - AIRLOCK_STDIO_CHUNK_MAX
                ? sr->port : -1, .events = POLLIN },
        { .fd = in_len > 0 ? sr->in_w : -1, .events = POLLOUT },
        { .fd = sr->out_r, .events = POLLIN },
        { .fd = sr->err_r, .events = POLLIN },
      };

      if (poll (fds, 4, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          break;
        }
      if (fds[0].revents & (POLLIN | POLLHUP | POLLERR))
        {
          ssize_t n = read (sr->port, rx + rx_len, sizeof rx - rx_len);

          if (n <= 0)
            port_open = false;   /* the host left: no more stdin */
          else
            rx_len += (size_t) n;
          /* Whole chunks into the stdin buffer. */
          while (rx_len >= AIRLOCK_STDIO_HEADER_SIZE)
            {
              size_t clen = wire_get_le16 (rx + 2);

              if (clen > AIRLOCK_STDIO_CHUNK_MAX)
                {
                  port_open = false;   /* not our host: stop listening */
                  break;
                }
              if (rx_len < AIRLOCK_STDIO_HEADER_SIZE + clen)
                break;
              if (rx[0] == AIRLOCK_STDIO_STDIN)
                {
                  memcpy (inbuf + in_len, rx + AIRLOCK_STDIO_HEADER_SIZE, clen);
                  in_len += clen;
                  sr->bytes_in += clen;
                  if (rx[1] & AIRLOCK_STDIO_EOF)
                    stdin_eof = true;
                }
              memmove (rx, rx + AIRLOCK_STDIO_HEADER_SIZE + clen,
                       rx_len - AIRLOCK_STDIO_HEADER_SIZE - clen);
              rx_len -= AIRLOCK_STDIO_HEADER_SIZE + clen;
            }
        }
      if (in_len > 0 && (fds[1].revents & (POLLOUT | POLLERR | POLLHUP)))
        {
          ssize_t n = write (sr->in_w, inbuf, in_len);

          if (n < 0 && errno != EAGAIN && errno != EINTR)
            in_len = 0;   /* the workload closed its stdin: drop the rest */
          else if (n > 0)
            {
              memmove (inbuf, inbuf + n, in_len - (size_t) n);
              in_len -= (size_t) n;
            }
        }
      if ((stdin_eof || !port_open) && in_len == 0 && sr->in_w >= 0)
        {
          close (sr->in_w);
          sr->in_w = -1;
        }
      for (int i = 2; i < 4; i++)
        if (fds[i].revents & (POLLIN | POLLHUP | POLLERR))
          {
            int *fd = i == 2 ? &sr->out_r : &sr->err_r;
            uint8_t stream = i == 2 ? AIRLOCK_STDIO_STDOUT : AIRLOCK_STDIO_STDERR;
            uint8_t buf[AIRLOCK_STDIO_CHUNK_MAX];
            ssize_t n = read (*fd, buf, sizeof buf);

            if (n < 0 && (errno == EINTR || errno == EAGAIN))
              continue;
            if (n <= 0)
              {
                (void) stdio_send (sr, stream, AIRLOCK_STDIO_EOF, NULL, 0);
                close (*fd);
                *fd = -1;
              }
            else if (stdio_send (sr, stream, 0, buf, (size_t) n) < 0)
              {
                /* The host is gone: keep draining so the workload never
                 * blocks on a full pipe. */
              }
          }
    }
  if (sr->in_w >= 0)
    close (sr->in_w);
  return NULL;
}

/* The workload's terminal on AIRLOCK_PORT_STDIO (AIRLOCK_SPEC_TTY): what
 * stdio_main() does for pipes, for the master of its pseudo-terminal.
 * Stdin bytes are written to the master (buffered, bounded, without
 * blocking: the line discipline echoes them, edits lines, turns ^C into
 * SIGINT for the foreground process group); what the master yields is one
 * STDOUT stream; WINSIZE chunks resize the terminal (the kernel signals
 * SIGWINCH).  The host's end of stdin is the terminal's end-of-file
 * character once the bytes before it are in, so a shell reading an empty
 * line sees end of file, as from a keyboard.  The thread ends when the
 * master reports that no process has the terminal open any more (EIO). */
void *
tty_main (void *data)
{
  struct stdio_relay *sr = data;
  static uint8_t rx[AIRLOCK_STDIO_HEADER_SIZE + AIRLOCK_STDIO_CHUNK_MAX];
  static uint8_t inbuf[64 * 1024];
  size_t rx_len = 0, in_len = 0;
  bool port_open = true, stdin_eof = false, eof_sent = false;

  for (;;)
    {
      bool want_write = in_len > 0 || ((stdin_eof || !port_open) && !eof_sent);
      struct pollfd fds[2] = {
        { .fd = port_open && !stdin_eof && in_len < sizeof inbuf - AIRLOCK_STDIO_CHUNK_MAX
                ? sr->port : -1, .events = POLLIN },
        { .fd = sr->pty, .events = POLLIN | (want_write ? POLLOUT : 0) },
      };

      if (poll (fds, 2, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          break;
        }
      if (fds[0].revents & (POLLIN | POLLHUP | POLLERR))
        {
          ssize_t n = read (sr->port, rx + rx_len, sizeof rx - rx_len);

          if (n <= 0)
            port_open = false;
          else
            rx_len += (size_t) n;
          while (rx_len >= AIRLOCK_STDIO_HEADER_SIZE)
            {
              size_t clen = wire_get_le16 (rx + 2);

              if (clen > AIRLOCK_STDIO_CHUNK_MAX)
                {
                  port_open = false;
                  break;
                }
              if (rx_len < AIRLOCK_STDIO_HEADER_SIZE + clen)
                break;
              if (rx[0] == AIRLOCK_STDIO_STDIN)
                {
                  memcpy (inbuf + in_len, rx + AIRLOCK_STDIO_HEADER_SIZE, clen);
                  in_len += clen;
                  sr->bytes_in += clen;
                  if (rx[1] & AIRLOCK_STDIO_EOF)
                    stdin_eof = true;
                }
              else if (rx[0] == AIRLOCK_STDIO_WINSIZE && clen == 4)
                {
                  struct winsize ws = {
                    .ws_row = wire_get_le16 (rx + AIRLOCK_STDIO_HEADER_SIZE),
                    .ws_col = wire_get_le16 (rx + AIRLOCK_STDIO_HEADER_SIZE + 2),
                  };

                  (void) ioctl (sr->pty, TIOCSWINSZ, &ws);
                }
              memmove (rx, rx + AIRLOCK_STDIO_HEADER_SIZE + clen,
                       rx_len - AIRLOCK_STDIO_HEADER_SIZE - clen);
              rx_len -= AIRLOCK_STDIO_HEADER_SIZE + clen;
            }
        }
      if (fds[1].revents & POLLOUT)
        {
          if (in_len > 0)
            {
              ssize_t n = write (sr->pty, inbuf, in_len);

              if (n > 0)
                {
                  memmove (inbuf, inbuf + n, in_len - (size_t) n);
                  in_len -= (size_t) n;
                }
              else if (n < 0 && errno != EAGAIN && errno != EINTR)
                in_len = 0;
            }
          else if ((stdin_eof || !port_open) && !eof_sent)
            {
              struct termios t;
              uint8_t veof = 4;   /* ^D, the default */

              if (tcgetattr (sr->pty, &t) == 0 && t.c_cc[VEOF] != _POSIX_VDISABLE)
                veof = t.c_cc[VEOF];
              (void) write (sr->pty, &veof, 1);
              eof_sent = true;
            }
        }
      if (fds[1].revents & (POLLIN | POLLHUP | POLLERR))
        {
          uint8_t buf[AIRLOCK_STDIO_CHUNK_MAX];
          ssize_t n = read (sr->pty, buf, sizeof buf);

          if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
          if (n <= 0)
            {
              /* EIO: the last process holding the terminal closed it. */
              (void) stdio_send (sr, AIRLOCK_STDIO_STDOUT, AIRLOCK_STDIO_EOF, NULL, 0);
              break;
            }
          (void) stdio_send (sr, AIRLOCK_STDIO_STDOUT, 0, buf, (size_t) n);
        }
    }
  return NULL;
}

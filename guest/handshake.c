/* Steps 3 and 4 of the boot: the virtio-serial ports (the evidence port,
 * and the stdio port the supervisor opens the same way), what the guest
 * hello says about this guest (uname, this program's build id), and the
 * host hello with the run spec after it. */
#define _GNU_SOURCE

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "init.h"

#define VIRTIO_PORTS_DIR "/sys/class/virtio-ports"

/* The run spec, read right after the host hello. */
uint8_t spec_bytes[AIRLOCK_SPEC_MAX];

/* ---- step 3: the evidence port ---------------------------------------- */

/* Looks once through VIRTIO_PORTS_DIR for the port named @name.  Returns 0
 * and fills @ret_dev with its /dev path, -ENOENT when it is not (yet)
 * there, or another -errno. */
static int
find_port (const char *name, char *ret_dev, size_t size)
{
  DIR *dir = opendir (VIRTIO_PORTS_DIR);
  struct dirent *de;
  int r = -ENOENT;

  if (!dir)
    return -errno;   /* ENOENT until virtio_console registers the class */
  while ((de = readdir (dir)))
    {
      char path[512], port_name[128];
      ssize_t n;

      if (de->d_name[0] == '.')
        continue;
      snprintf (path, sizeof path, VIRTIO_PORTS_DIR "/%s/name", de->d_name);
      /* "name" appears only once the host has named the port. */
      n = read_file (path, port_name, sizeof port_name);
      if (n <= 0)
        continue;
      if (port_name[n - 1] == '\n')
        port_name[n - 1] = '\0';
      if (strcmp (port_name, name) == 0)
        {
          if ((size_t) snprintf (ret_dev, size, "/dev/%s", de->d_name) >= size)
            r = -ENAMETOOLONG;
          else
            r = 0;
          break;
        }
    }
  closedir (dir);
  return r;
}

/* Waits up to PORT_WAIT_MS for the port named @name and its device node,
 * and opens it.  @ret_dev is filled as soon as the port is found, even if
 * opening it then fails, so the caller can say which step failed.  Returns
 * the fd, -ETIMEDOUT, or the -errno of a failed open. */
int
open_port (const char *name, char *ret_dev, size_t size)
{
  uint64_t deadline = clock_ns (CLOCK_MONOTONIC) + PORT_WAIT_MS * NS_PER_MS;

  ret_dev[0] = '\0';
  for (;;)
    {
      int r = find_port (name, ret_dev, size);

      if (r == 0)
        {
          /* Exclusive: virtio_console refuses a second open with EBUSY
           * while this fd is open, which is what keeps anything else in
           * the guest off the channel. */
          int fd = open (ret_dev, O_RDWR | O_CLOEXEC);

          if (fd >= 0)
            return fd;
          r = -errno;
        }
      /* The class directory, the name attribute and the device node each
       * appear a little later than the one before. */
      if (r != -ENOENT)
        return r;
      if (clock_ns (CLOCK_MONOTONIC) >= deadline)
        return -ETIMEDOUT;
      sleep_ms (POLL_INTERVAL_MS);
    }
}

/* ---- step 4: hellos --------------------------------------------------- */

static int
find_build_id_cb (struct dl_phdr_info *info, size_t size, void *data)
{
  struct guest_identity *id = data;

  /* Only this program: a static binary can still list the vDSO, which
   * carries the kernel's build id. */
  if ((uintptr_t) info->dlpi_phdr != (uintptr_t) getauxval (AT_PHDR))
    return 0;

  for (size_t i = 0; i < info->dlpi_phnum; i++)
    {
      const ElfW (Phdr) *ph = &info->dlpi_phdr[i];
      const uint8_t *p = (const uint8_t *) (info->dlpi_addr + ph->p_vaddr);
      size_t left = ph->p_memsz;
      size_t align = ph->p_align == 8 ? 8 : 4;

      if (ph->p_type != PT_NOTE)
        continue;
      while (left >= sizeof (ElfW (Nhdr)))
        {
          const ElfW (Nhdr) *note = (const void *) p;
          size_t name_size = (note->n_namesz + align - 1) & ~(align - 1);
          size_t desc_size = (note->n_descsz + align - 1) & ~(align - 1);
          size_t total = sizeof *note + name_size + desc_size;

          if (name_size > left || desc_size > left || total > left)
            break;
          if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == sizeof "GNU"
              && memcmp (p + sizeof *note, "GNU", sizeof "GNU") == 0
              && note->n_descsz > 0 && note->n_descsz <= sizeof id->build_id)
            {
              memcpy (id->build_id, p + sizeof *note + name_size, note->n_descsz);
              id->build_id_len = note->n_descsz;
              return 1;
            }
          p += total;
          left -= total;
        }
    }
  return 1;   /* this program has no build id: stop looking */
}

int
read_guest_identity (struct guest_identity *id)
{
  memset (id, 0, sizeof *id);
  if (uname (&id->uts) < 0)
    return -errno;
  /* dl_iterate_phdr works in static glibc: it reports this program's own
   * program headers (from AT_PHDR), so no file needs to be read. */
  dl_iterate_phdr (find_build_id_cb, id);
  if (id->build_id_len == 0)
    return -ENODATA;
  return 0;
}

/* Reads exactly @len bytes of what the host sends.  Returns 0,
 * -ECONNRESET when the host left part way (@mid_message: the bytes continue
 * a message that already started), or the -errno of a failed read. */
static int
read_host_bytes (int fd, uint8_t *buf, size_t len, bool mid_message)
{
  uint64_t start = clock_ns (CLOCK_MONOTONIC);
  bool said_waiting = false;
  size_t got = 0;

  while (got < len)
    {
      ssize_t n = read (fd, buf + got, len - got);

      if (n > 0)
        {
          got += (size_t) n;
          continue;
        }
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return -errno;
      /* virtio_console's read returns 0, instead of blocking, while no host
       * is connected to the port, and poll() then reports the port readable
       * (with POLLHUP).  So waiting for a host that has not connected yet
       * means polling; losing one mid-message means this run is over. */
      if (got > 0 || mid_message)
        return -ECONNRESET;
      if (!said_waiting && clock_ns (CLOCK_MONOTONIC) - start > NS_PER_S)
        {
          console_log ("waiting for the host to connect to the evidence port");
          said_waiting = true;
        }
      sleep_ms (POLL_INTERVAL_MS);
    }
  return 0;
}

/* Reads the 48-byte host hello and the run spec after it (into
 * spec_bytes).  The host speaks first; this blocks until all of it
 * arrived.  Returns 0, -EPROTO when it is not an airlock host hello of our
 * version (@ret then holds only the magic and version, for the message),
 * -EMSGSIZE when the spec is longer than AIRLOCK_SPEC_MAX, -ECONNRESET when
 * the host left mid-message, or the -errno of a failed read. */
int
read_host_hello (int fd, struct host_hello *ret)
{
  uint8_t buf[AIRLOCK_HOST_HELLO_SIZE];
  int r;

  r = read_host_bytes (fd, buf, sizeof buf, false);
  if (r < 0)
    return r;

  memcpy (ret->magic, buf, sizeof ret->magic);
  ret->version = buf[offsetof (struct airlock_host_hello, version)];
  if (memcmp (ret->magic, AIRLOCK_HOST_HELLO_MAGIC, sizeof ret->magic) != 0
      || ret->version != AIRLOCK_PROTO_VERSION)
    return -EPROTO;
  /* flags and the reserved field are not checked: version 1 gives them no
   * meaning, so whatever they hold cannot change what this guest does. */
  ret->heartbeat_ms = wire_get_le32 (buf + offsetof (struct airlock_host_hello, heartbeat_ms));
  ret->spec_length = wire_get_le32 (buf + offsetof (struct airlock_host_hello, spec_length));
  memcpy (ret->nonce, buf + offsetof (struct airlock_host_hello, nonce), AIRLOCK_NONCE_LEN);
  if (ret->spec_length > AIRLOCK_SPEC_MAX)
    return -EMSGSIZE;
  /* The spec is part of the same message: the host already connected. */
  return read_host_bytes (fd, spec_bytes, ret->spec_length, true);
}


/* A remote hypervisor's copies of the guest kernel, the initramfs and an
 * image's rootfs disk (volumes-private.h).
 *
 * Nothing is shared with a remote hypervisor but libvirt: the files go up
 * as storage volumes in airlock's pool, through the connection's own
 * streams (virStorageVolUpload), named by their SHA-256 so that every later
 * run and every airlock on the pool reuses them.  A name is no proof: the
 * pool is another host's directory and another process may be writing the
 * same volume, so each use reads the volume back (virStorageVolDownload)
 * and hashes it.  On a network that costs a read of the bytes per run
 * (measured in bench/remote); it is what makes "booted from these bytes"
 * true of a host we do not control. */
#include "config.h"

#include "vm/volumes-private.h"

#include "vm/vm.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* How long a use waits for a volume that another process is still
 * uploading (its digest does not match yet, libvirt will not delete it)
 * before it gives up. */
#define OTHER_UPLOAD_WAIT_MS 120000

static int
send_from_fd (virStreamPtr st, char *data, size_t nbytes, void *opaque)
{
  int fd = *(int *) opaque;
  ssize_t n;

  do
    n = read (fd, data, nbytes);
  while (n < 0 && errno == EINTR);
  return (int) n;
}

static int
recv_to_checksum (virStreamPtr st, const char *data, size_t nbytes, void *opaque)
{
  g_checksum_update (opaque, (const guchar *) data, (gssize) nbytes);
  return (int) nbytes;
}

static char *
file_sha256 (const char *path, GError **error)
{
  g_autoptr (GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  g_autofree guchar *buf = g_malloc (1 << 20);
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  ssize_t n;

  if (fd < 0)
    {
      g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_FAILED, "cannot read '%s': %s",
                   path, g_strerror (errno));
      return NULL;
    }
  while ((n = read (fd, buf, 1 << 20)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0)
      g_checksum_update (sum, buf, n);
  if (n < 0)
    {
      g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_FAILED, "cannot read '%s': %s",
                   path, g_strerror (errno));
      close (fd);
      return NULL;
    }
  close (fd);
  return g_strdup (g_checksum_get_string (sum));
}

/* The SHA-256 of @vol's bytes as the hypervisor holds them, or NULL. */
static char *
volume_sha256 (virConnectPtr conn, virStorageVolPtr vol)
{
  g_autoptr (GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  virStreamPtr st = virStreamNew (conn, 0);
  gboolean ok;

  if (!st)
    return NULL;
  ok = virStorageVolDownload (vol, st, 0, 0, 0) == 0
       && virStreamRecvAll (st, recv_to_checksum, sum) == 0 && virStreamFinish (st) == 0;
  if (!ok)
    (void) virStreamAbort (st);
  virStreamFree (st);
  return ok ? g_strdup (g_checksum_get_string (sum)) : NULL;
}

static virStoragePoolPtr
open_pool (AirlockConnection *conn, GError **error)
{
  virStoragePoolPtr pool = virStoragePoolLookupByName (conn->conn, AIRLOCK_POOL_NAME);

  if (!pool)
    {
      /* A directory pool of our own, built and started; defined (not
       * transient) so the volumes are found again after the daemon
       * restarts.  Two airlocks may race here: the loser finds the
       * winner's. */
      pool = virStoragePoolDefineXML (conn->conn,
                                      "<pool type='dir'><name>" AIRLOCK_POOL_NAME "</name>"
                                      "<target><path>" AIRLOCK_POOL_PATH "</path>"
                                      "<permissions><mode>0711</mode></permissions>"
                                      "</target></pool>", 0);
      if (pool)
        {
          (void) virStoragePoolBuild (pool, 0);
          (void) virStoragePoolSetAutostart (pool, 1);
        }
      else
        pool = virStoragePoolLookupByName (conn->conn, AIRLOCK_POOL_NAME);
    }
  if (!pool)
    {
      g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_START,
                   "'%s' has no storage pool '%s' and airlock cannot define one at '%s': %s",
                   conn->uri, AIRLOCK_POOL_NAME, AIRLOCK_POOL_PATH, airlock_vir_last_error ());
      return NULL;
    }
  if (virStoragePoolIsActive (pool) != 1 && virStoragePoolCreate (pool, 0) < 0)
    {
      /* libvirt's reason, before another call resets it. */
      g_autofree char *why = g_strdup (airlock_vir_last_error ());

      /* Another airlock may have started it meanwhile. */
      if (virStoragePoolIsActive (pool) == 1)
        return pool;
      g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_START,
                   "cannot start storage pool '%s' on '%s': %s", AIRLOCK_POOL_NAME, conn->uri,
                   why);
      virStoragePoolFree (pool);
      return NULL;
    }
  return pool;
}

/* Creates volume @name of @size bytes in @pool and writes @path into it.
 * FALSE when it could not; *@ret_exists when another process created it
 * first (then nothing was written). */
static gboolean
upload (AirlockConnection *conn, virStoragePoolPtr pool, const char *name, const char *path,
        guint64 size, gboolean *ret_exists, GError **error)
{
  g_autofree char *xml = g_strdup_printf ("<volume><name>%s</name><capacity unit='bytes'>%"
                                          G_GUINT64_FORMAT "</capacity><target><format "
                                          "type='raw'/><permissions><mode>0644</mode>"
                                          "</permissions></target></volume>", name, size);
  virStorageVolPtr vol;
  virStreamPtr st;
  int fd;
  gboolean ok;

  *ret_exists = FALSE;
  vol = virStorageVolCreateXML (pool, xml, 0);
  if (!vol)
    {
      virStorageVolPtr other = virStorageVolLookupByName (pool, name);

      if (other)
        {
          virStorageVolFree (other);
          *ret_exists = TRUE;
          return FALSE;
        }
      g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_START,
                   "cannot create volume '%s' in pool '%s' on '%s': %s", name, AIRLOCK_POOL_NAME,
                   conn->uri, airlock_vir_last_error ());
      return FALSE;
    }
  fd = open (path, O_RDONLY | O_CLOEXEC);
  st = virStreamNew (conn->conn, 0);
  ok = fd >= 0 && st && virStorageVolUpload (vol, st, 0, size, 0) == 0
       && virStreamSendAll (st, send_from_fd, &fd) == 0 && virStreamFinish (st) == 0;
  if (!ok)
    {
      g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_START,
                   "cannot upload '%s' to volume '%s' on '%s': %s", path, name, conn->uri,
                   fd < 0 ? g_strerror (errno) : airlock_vir_last_error ());
      if (st)
        (void) virStreamAbort (st);
      /* A half-written volume must not stay under a digest's name. */
      (void) virStorageVolDelete (vol, 0);
    }
  if (st)
    virStreamFree (st);
  if (fd >= 0)
    close (fd);
  virStorageVolFree (vol);
  return ok;
}

char *
airlock_remote_volume_ensure (AirlockConnection *conn, const char *path, const char *sha256,
                              const char *what, GError **error)
{
  g_autofree char *digest = sha256 ? g_strdup (sha256) : file_sha256 (path, error);
  g_autofree char *name = NULL;
  virStoragePoolPtr pool = NULL;
  gint64 deadline = g_get_monotonic_time () + (gint64) OTHER_UPLOAD_WAIT_MS * 1000;
  gboolean wrote = FALSE;
  char *ret = NULL;
  struct stat st;

  if (!digest)
    return NULL;
  if (stat (path, &st) < 0)
    {
      g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_FAILED, "cannot read %s '%s': %s",
                   what, path, g_strerror (errno));
      return NULL;
    }
  name = g_strdup_printf ("airlock-sha256-%s", digest);
  pool = open_pool (conn, error);
  if (!pool)
    return NULL;
  /* The pool's list may be stale: another process may have added to it. */
  (void) virStoragePoolRefresh (pool, 0);
  for (;;)
    {
      virStorageVolPtr vol = virStorageVolLookupByName (pool, name);
      g_autofree char *have = NULL;

      if (!vol)
        {
          gboolean exists;

          if (!upload (conn, pool, name, path, (guint64) st.st_size, &exists, error) && !exists)
            break;
          wrote = !exists;
          continue;
        }
      have = volume_sha256 (conn->conn, vol);
      if (have && g_str_equal (have, digest))
        {
          ret = virStorageVolGetPath (vol);
          virStorageVolFree (vol);
          if (!ret)
            g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_START,
                         "cannot find the path of volume '%s' on '%s': %s", name, conn->uri,
                         airlock_vir_last_error ());
          break;
        }
      if (wrote || g_get_monotonic_time () >= deadline)
        {
          /* Ours and wrong, or nobody finished it: it is not what its name
           * says.  Removed, so the next run writes it afresh. */
          g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_START,
                       "volume '%s' on '%s' does not hold %s '%s' (read back: %s); removed",
                       name, conn->uri, what, path, have ? have : airlock_vir_last_error ());
          (void) virStorageVolDelete (vol, 0);
          virStorageVolFree (vol);
          break;
        }
      /* Not ours: either another process's upload, not finished (libvirt
       * refuses to delete a volume a stream is writing: wait for it), or
       * bytes that changed since it was written (deleted, and written
       * again by the next turn). */
      if (virStorageVolDelete (vol, 0) < 0)
        g_usleep (500 * 1000);
      virStorageVolFree (vol);
    }
  virStoragePoolFree (pool);
  return ret;
}

gboolean
airlock_remote_pool_check (AirlockConnection *conn, char **ret_detail)
{
  virStoragePoolPtr pool = virStoragePoolLookupByName (conn->conn, AIRLOCK_POOL_NAME);
  gboolean ok = TRUE;

  if (!pool)
    *ret_detail = g_strdup_printf ("no pool '%s' yet: airlock defines a directory pool at %s "
                                   "on its first run (the connection's user must be allowed to)",
                                   AIRLOCK_POOL_NAME, AIRLOCK_POOL_PATH);
  else if (virStoragePoolIsActive (pool) != 1)
    *ret_detail = g_strdup_printf ("pool '%s' is defined but not active: airlock starts it on "
                                   "its first run", AIRLOCK_POOL_NAME);
  else
    {
      g_autofree char *xml = virStoragePoolGetXMLDesc (pool, 0);
      int n = virStoragePoolNumOfVolumes (pool);
      const char *path = xml ? strstr (xml, "<path>") : NULL;
      const char *end = path ? strstr (path, "</path>") : NULL;

      *ret_detail = g_strdup_printf ("pool '%s' at %.*s, %d volume(s)", AIRLOCK_POOL_NAME,
                                     end ? (int) (end - path - 6) : 1, end ? path + 6 : "?", n);
      ok = n >= 0;
    }
  if (pool)
    virStoragePoolFree (pool);
  return ok;
}

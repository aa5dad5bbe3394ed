/* Names → addresses: the addresses the sinkhole's DNS hands out (see
 * sinkhole.h).
 *
 * Each name's addresses come from a hash of its lowercased form, so the
 * same name gets the same addresses in every run and on every arch: a
 * report, a policy or a person can recognise 198.18.x.y as "the address
 * pypi.org always gets".  Two names whose hashes collide within one run
 * are separated by linear probing, so only the later one moves, and only
 * in that run.  The ranges are for benchmarking (RFC 2544) and
 * documentation (RFC 3849): nothing real answers there, so an address
 * never stands for anything but the name it was handed out for. */
#include "config.h"

#include "sinkhole.h"

#include <string.h>

/* 198.18.0.0/15: 17 host bits. */
#define V4_BASE 0xc6120000u
#define V4_HOSTS (1u << 17)

/* Left out of the v4 range: 198.18.0.0/24, for the sinkhole's own
 * addresses (its gateway and resolver must never be some name's), and any
 * address whose last byte is 0 or 255, which some clients refuse as a
 * network or broadcast address whatever the prefix. */
static gboolean
v4_usable (guint32 host)
{
  guint8 last = host & 0xff;

  return host >= 256 && last != 0 && last != 255;
}

/* 2001:db8:a1::/64 */
static const guint8 v6_prefix[8] = { 0x20, 0x01, 0x0d, 0xb8, 0x00, 0xa1, 0x00, 0x00 };

/* Left out of the v6 range: 2001:db8:a1::/112, the sinkhole's own, as
 * above. */
static gboolean
v6_usable (guint64 low)
{
  return low > 0xffff;
}

typedef struct {
  char *name;          /* as first asked */
  guint32 v4;          /* host order, in the range */
  guint64 v6_low;      /* the low 64 bits of the v6 address */
} NameEntry;

struct _AirlockSinkholeNames {
  GHashTable *by_name; /* lowercased name → NameEntry (owned) */
  GHashTable *by_v4;   /* GUINT_TO_POINTER (v4 host part + 1) → NameEntry */
  GHashTable *by_v6;   /* guint64 * (the entry's v6_low) → NameEntry */
};

static void
name_entry_free (NameEntry *entry)
{
  g_free (entry->name);
  g_free (entry);
}

AirlockSinkholeNames *
airlock_sinkhole_names_new (void)
{
  AirlockSinkholeNames *names = g_new0 (AirlockSinkholeNames, 1);

  names->by_name = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                          (GDestroyNotify) name_entry_free);
  names->by_v4 = g_hash_table_new (g_direct_hash, g_direct_equal);
  names->by_v6 = g_hash_table_new (g_int64_hash, g_int64_equal);
  return names;
}

void
airlock_sinkhole_names_free (AirlockSinkholeNames *names)
{
  if (!names)
    return;
  g_hash_table_unref (names->by_v6);
  g_hash_table_unref (names->by_v4);
  g_hash_table_unref (names->by_name);
  g_free (names);
}

static void
entry_addresses (const NameEntry *entry, guint8 v4[4], guint8 v6[16])
{
  guint32 a = V4_BASE + entry->v4;

  if (v4)
    {
      v4[0] = a >> 24;
      v4[1] = (a >> 16) & 0xff;
      v4[2] = (a >> 8) & 0xff;
      v4[3] = a & 0xff;
    }
  if (v6)
    {
      memcpy (v6, v6_prefix, 8);
      for (int i = 0; i < 8; i++)
        v6[8 + i] = (entry->v6_low >> (56 - 8 * i)) & 0xff;
    }
}

gboolean
airlock_sinkhole_names_lookup (AirlockSinkholeNames *names, const char *name, guint8 ret_v4[4],
                               guint8 ret_v6[16])
{
  g_autofree char *key = NULL;
  g_autoptr (GChecksum) checksum = NULL;
  guint8 digest[32];
  gsize digest_len = sizeof digest;
  NameEntry *entry;
  guint32 v4;
  guint64 v6 = 0;

  g_return_val_if_fail (names != NULL, FALSE);
  g_return_val_if_fail (name != NULL, FALSE);

  /* ASCII case only, as DNS compares names (RFC 4343); presentation form
   * writes every other byte as \DDD, which lowercasing leaves alone. */
  key = g_ascii_strdown (name, -1);
  entry = g_hash_table_lookup (names->by_name, key);
  if (entry)
    {
      entry_addresses (entry, ret_v4, ret_v6);
      return TRUE;
    }
  if (g_hash_table_size (names->by_name) >= AIRLOCK_SINKHOLE_NAMES_MAX)
    return FALSE;

  checksum = g_checksum_new (G_CHECKSUM_SHA256);
  g_checksum_update (checksum, (const guchar *) key, (gssize) strlen (key));
  g_checksum_get_digest (checksum, digest, &digest_len);

  /* Probing ends: NAMES_MAX is far below either range's usable size. */
  v4 = (((guint32) digest[0] << 24) | ((guint32) digest[1] << 16) | ((guint32) digest[2] << 8)
        | digest[3]) % V4_HOSTS;
  while (!v4_usable (v4) || g_hash_table_contains (names->by_v4, GUINT_TO_POINTER (v4 + 1)))
    v4 = (v4 + 1) % V4_HOSTS;
  for (int i = 0; i < 8; i++)
    v6 = (v6 << 8) | digest[8 + i];
  while (!v6_usable (v6) || g_hash_table_contains (names->by_v6, &v6))
    v6++;

  entry = g_new0 (NameEntry, 1);
  entry->name = g_strdup (name);
  entry->v4 = v4;
  entry->v6_low = v6;
  g_hash_table_insert (names->by_name, g_steal_pointer (&key), entry);
  g_hash_table_insert (names->by_v4, GUINT_TO_POINTER (v4 + 1), entry);
  g_hash_table_insert (names->by_v6, &entry->v6_low, entry);
  entry_addresses (entry, ret_v4, ret_v6);
  return TRUE;
}

const char *
airlock_sinkhole_names_reverse (AirlockSinkholeNames *names, int family, const guint8 *address)
{
  NameEntry *entry = NULL;

  g_return_val_if_fail (names != NULL, NULL);
  g_return_val_if_fail (address != NULL, NULL);

  if (family == AF_INET)
    {
      guint32 a = ((guint32) address[0] << 24) | ((guint32) address[1] << 16)
                  | ((guint32) address[2] << 8) | address[3];

      if (a - V4_BASE < V4_HOSTS)
        entry = g_hash_table_lookup (names->by_v4, GUINT_TO_POINTER (a - V4_BASE + 1));
    }
  else if (family == AF_INET6)
    {
      guint64 low = 0;

      if (memcmp (address, v6_prefix, 8) == 0)
        {
          for (int i = 0; i < 8; i++)
            low = (low << 8) | address[8 + i];
          entry = g_hash_table_lookup (names->by_v6, &low);
        }
    }
  return entry ? entry->name : NULL;
}

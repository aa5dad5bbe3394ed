/* A pool of hypervisors (AirlockSessionOptions.uris; hosts-private.h).
 *
 * Process-wide, so that the sessions of a gate's two arches share the
 * hosts and their slots.  Each host is asked once what it offers each arch
 * (airlock_hypervisor_probe(): one connection, its domain capabilities);
 * a run goes to the first host in the list's order with a free slot that
 * can run its arch, a host offering KVM for it before one that only
 * emulates it.  When every host that can run the arch is full, the run
 * waits for a slot.  A host a run found failing is not given that run's
 * retry (run.c). */
#include "config.h"

#include "case/hosts-private.h"

#include "vm/vm-private.h"

typedef struct {
  char *uri;
  guint busy;
  gboolean probed[AIRLOCK_N_ARCHES];
  AirlockHostSupport support[AIRLOCK_N_ARCHES];
  char *why[AIRLOCK_N_ARCHES];     /* why it cannot run the arch */
} Host;

static GMutex hosts_lock;
static GCond hosts_cond;
static GHashTable *hosts;           /* uri → Host, for the process */
static AirlockHostProbeFunc probe_func = airlock_hypervisor_probe;

void
airlock_hosts_set_probe_func (AirlockHostProbeFunc func)
{
  g_mutex_lock (&hosts_lock);
  probe_func = func ? func : airlock_hypervisor_probe;
  g_mutex_unlock (&hosts_lock);
}

static Host *
host_get (const char *uri)
{
  Host *h;

  if (!hosts)
    hosts = g_hash_table_new (g_str_hash, g_str_equal);
  h = g_hash_table_lookup (hosts, uri);
  if (!h)
    {
      h = g_new0 (Host, 1);
      h->uri = g_strdup (uri);
      g_hash_table_insert (hosts, h->uri, h);
    }
  return h;
}

char *
airlock_hosts_acquire (const char *const *uris, guint slots, const char *cache_dir,
                       AirlockArch arch, const char *avoid, GError **error)
{
  char *chosen = NULL;

  g_mutex_lock (&hosts_lock);
  for (;;)
    {
      Host *best = NULL;
      gboolean any = FALSE, probed = FALSE;
      g_autoptr (GString) why = g_string_new (NULL);

      for (gsize i = 0; uris[i] && !probed; i++)
        {
          Host *h = host_get (uris[i]);

          if (avoid && g_str_equal (h->uri, avoid))
            {
              g_string_append_printf (why, "%s'%s' failed this run", why->len ? "; " : "",
                                      h->uri);
              continue;
            }
          if (!h->probed[arch])
            {
              g_autoptr (GError) local = NULL;
              AirlockHostSupport support;
              AirlockHostProbeFunc probe = probe_func;

              /* Unlocked: a probe opens a connection, which takes time. */
              g_mutex_unlock (&hosts_lock);
              support = probe (h->uri, cache_dir, arch, &local);
              g_mutex_lock (&hosts_lock);
              if (!h->probed[arch])
                {
                  h->probed[arch] = TRUE;
                  h->support[arch] = support;
                  h->why[arch] = local ? g_strdup (local->message) : NULL;
                }
              /* The lock was let go: another run may have taken a slot
               * this scan saw free.  Scan again, from the first host. */
              probed = TRUE;
              continue;
            }
          if (h->support[arch] == AIRLOCK_HOST_CANNOT)
            {
              g_string_append_printf (why, "%s%s", why->len ? "; " : "",
                                      h->why[arch] ? h->why[arch] : h->uri);
              continue;
            }
          any = TRUE;
          if (h->busy >= slots)
            continue;
          if (!best || (h->support[arch] == AIRLOCK_HOST_KVM
                        && best->support[arch] != AIRLOCK_HOST_KVM))
            best = h;
        }
      if (probed)
        continue;
      if (best)
        {
          best->busy++;
          chosen = g_strdup (best->uri);
          break;
        }
      if (!any)
        {
          g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_CONNECT,
                       "no hypervisor of the pool can run %s guests: %s",
                       airlock_arch_to_string (arch), why->str);
          break;
        }
      g_cond_wait (&hosts_cond, &hosts_lock);
    }
  g_mutex_unlock (&hosts_lock);
  return chosen;
}

void
airlock_hosts_release (const char *uri)
{
  Host *h;

  g_mutex_lock (&hosts_lock);
  h = hosts ? g_hash_table_lookup (hosts, uri) : NULL;
  if (h && h->busy > 0)
    h->busy--;
  g_cond_broadcast (&hosts_cond);
  g_mutex_unlock (&hosts_lock);
}

char **
airlock_hosts_parse (const char *text)
{
  g_autoptr (GPtrArray) list = g_ptr_array_new_with_free_func (g_free);
  g_auto (GStrv) words = g_strsplit_set (text ? text : "", " \t\n", -1);

  for (gsize i = 0; words[i]; i++)
    if (*words[i])
      g_ptr_array_add (list, g_strdup (words[i]));
  g_ptr_array_add (list, NULL);
  return (char **) g_ptr_array_free (g_steal_pointer (&list), FALSE);
}

#include "stats.h"

double
secs (gint64 from, gint64 to)
{
  return (from && to && to >= from) ? (to - from) / 1e6 : -1;
}

int
stats_compare_doubles (gconstpointer a, gconstpointer b)
{
  double x = *(const double *) a;
  double y = *(const double *) b;

  return (x > y) - (x < y);
}

Stats
stats_of (GArray *samples, gsize offset)
{
  g_autoptr (GArray) v = g_array_new (FALSE, FALSE, sizeof (double));

  for (guint i = 0; i < samples->len; i++)
    {
      const char *base = samples->data + (gsize) i * g_array_get_element_size (samples);
      double x = *(const double *) (base + offset);

      if (x >= 0)
        g_array_append_val (v, x);
    }
  return stats_of_values (v);
}

Stats
stats_of_values (GArray *values)
{
  g_autoptr (GArray) v = g_array_copy (values);
  Stats s = { -1, -1, -1 };
  guint n = v->len;

  if (n == 0)
    return s;
  g_array_sort (v, stats_compare_doubles);
  s.min = g_array_index (v, double, 0);
  s.max = g_array_index (v, double, n - 1);
  s.median = n % 2 ? g_array_index (v, double, n / 2)
                   : (g_array_index (v, double, n / 2 - 1) + g_array_index (v, double, n / 2)) / 2;
  return s;
}

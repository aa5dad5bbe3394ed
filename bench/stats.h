/* Statistics the benchmarks share: medians of samples taken in one run. */
#pragma once

#include <glib.h>

typedef struct {
  double median;
  double min;
  double max;
} Stats;

/* Seconds between two g_get_monotonic_time () points, or -1 when either
 * is missing or they are out of order. */
double secs (gint64 from, gint64 to);

/* Median, min and max of the double at @offset in each element of @samples
 * (-1 when there are none; a sample of -1 lacks the point and is left out). */
Stats stats_of (GArray *samples, gsize offset);

/* Median, min and max of an array of doubles, every value counted (a
 * negative one too); -1 when there are none. */
Stats stats_of_values (GArray *values);

/* A GCompareFunc ordering doubles, for g_array_sort(). */
int stats_compare_doubles (gconstpointer a, gconstpointer b);

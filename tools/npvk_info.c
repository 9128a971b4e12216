/*
 * npvk-info: lists the Vulkan devices npvk sees, the capabilities it relies on,
 * and the device an npvk program would pick by default.
 *
 * Exit status: 0 when npvk has a usable device to pick, 1 when it has none (no
 * Vulkan loader or driver, no usable device, NPVK_DEVICE matching nothing), 2 on
 * a bad command line. Kept in C against the public header only, so that it also
 * shows what a plain C caller of the ABI sees.
 */
#include <npvk/npvk.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const kUsage =
    "usage: npvk-info [--json] [--help]\n"
    "\n"
    "Lists every Vulkan device with the capabilities npvk uses, and the device\n"
    "npvk picks when a program does not name one.\n"
    "\n"
    "  --json   machine-readable output on stdout\n"
    "  --help   this text\n"
    "\n"
    "Environment:\n"
    "  NPVK_DEVICE   a device index, a case-insensitive name substring or local-rank\n"
    "                (the default); every npvk program that does not choose a device\n"
    "                itself uses this one\n"
    "  OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID, NPVK_LOCAL_RANK\n"
    "                the local rank that local-rank uses (the first one set)\n"
    "\n"
    "Exit status: 0 when npvk has a usable device, 1 when it has none, 2 on a bad\n"
    "command line.\n";

static const char *device_type_name(uint32_t type) {
  switch (type) {
    case NPVK_DEVICE_INTEGRATED_GPU:
      return "integrated_gpu";
    case NPVK_DEVICE_DISCRETE_GPU:
      return "discrete_gpu";
    case NPVK_DEVICE_VIRTUAL_GPU:
      return "virtual_gpu";
    case NPVK_DEVICE_CPU:
      return "cpu";
    default:
      return "other";
  }
}

/* Vulkan packs variant:3 major:7 minor:10 patch:12 (VK_MAKE_API_VERSION). */
static void format_api_version(uint32_t v, char *out, size_t size) {
  snprintf(out, size, "%u.%u.%u", (v >> 22) & 0x7Fu, (v >> 12) & 0x3FFu, v & 0xFFFu);
}

static void format_bytes(uint64_t n, char *out, size_t size) {
  static const char *const kUnits[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = (double)n;
  int unit = 0;
  while (value >= 1024.0 && unit < 5) {
    value /= 1024.0;
    ++unit;
  }
  if (unit == 0) {
    snprintf(out, size, "%llu bytes", (unsigned long long)n);
  } else {
    snprintf(out, size, "%.1f %s (%llu bytes)", value, kUnits[unit], (unsigned long long)n);
  }
}

/* Device names and driver strings come from drivers, so they may hold quotes,
 * backslashes or control characters that would break the JSON. */
static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; ++p) {
    switch (*p) {
      case '"':
        fputs("\\\"", f);
        break;
      case '\\':
        fputs("\\\\", f);
        break;
      case '\n':
        fputs("\\n", f);
        break;
      case '\r':
        fputs("\\r", f);
        break;
      case '\t':
        fputs("\\t", f);
        break;
      default:
        if (*p < 0x20) {
          fprintf(f, "\\u%04x", *p);
        } else {
          fputc(*p, f);
        }
    }
  }
  fputc('"', f);
}

static void json_string_or_null(FILE *f, const char *s) {
  if (s) {
    json_string(f, s);
  } else {
    fputs("null", f);
  }
}

/* The fixed-size strings in npvk_device_info are filled by the library; bound
 * them anyway so a library bug cannot make us read past the array. */
#define TERMINATE(array) ((array)[sizeof(array) - 1] = '\0')

typedef struct device_entry {
  npvk_status status; /* of npvk_device_get_info */
  const char *error;  /* copy of the error message when status != NPVK_SUCCESS */
  npvk_device_info info;
} device_entry;

typedef struct report {
  uint32_t count;
  device_entry *devices;
  const char *npvk_device; /* the NPVK_DEVICE environment variable, or NULL */
  npvk_status select_status;
  const char *select_error;
  uint32_t selected;
  /* NPVK_DEVICE=local-rank (the default): the launcher's rank and variable
   * (-1 and NULL without one), and the device of each local rank 0..peers-1;
   * peers is 0 when NPVK_DEVICE names a device, so that no rank matters. */
  int64_t local_rank;
  const char *rank_variable;
  uint32_t peers;
  uint32_t *rank_devices;
  /* The selected device's cost model figures, as the kernel cache holds
   * them (measured by the first Python program that weighed a flush). */
  int cost_known;
  npvk_cost_model cost;
} report;

static void gather_cost_model(report *r);
static void print_text_cost_model(const report *r);

/* copy_string fails only when out of memory; print an empty message then. */
static const char *or_empty(const char *s) {
  return s ? s : "";
}

static char *copy_string(const char *s) {
  size_t n = strlen(s) + 1;
  char *copy = malloc(n);
  if (copy) memcpy(copy, s, n);
  return copy;
}

static int by_local_rank(const char *npvk_device) {
  return !npvk_device || !*npvk_device || strcasecmp(npvk_device, "local-rank") == 0;
}

/* Local rank r gets the device at r modulo the number of its peers (the
 * usable devices of the best type): the ranks from 0 until the first device
 * comes round again make the table. */
static void gather_ranks(report *r) {
  r->peers = 0;
  if (!by_local_rank(r->npvk_device) || r->count == 0) return;
  r->rank_devices = calloc(r->count, sizeof(uint32_t));
  if (!r->rank_devices) return;
  for (uint32_t rank = 0; rank < r->count; ++rank) {
    uint32_t index = 0;
    if (npvk_device_select_for_rank((int64_t)rank, &index) != NPVK_SUCCESS) break;
    if (rank > 0 && index == r->rank_devices[0]) break;
    r->rank_devices[rank] = index;
    r->peers = rank + 1;
  }
}

/* Fills `r`; the error messages are copied because npvk_last_error_message's
 * pointer only lives until the next npvk call. Returns 0 on an allocation
 * failure. */
static int gather(report *r) {
  r->devices = calloc(r->count ? r->count : 1, sizeof(device_entry));
  if (!r->devices) return 0;
  for (uint32_t i = 0; i < r->count; ++i) {
    device_entry *d = &r->devices[i];
    d->info.struct_size = (uint32_t)sizeof(npvk_device_info);
    d->status = npvk_device_get_info(i, &d->info);
    if (d->status != NPVK_SUCCESS) {
      d->error = copy_string(npvk_last_error_message());
      memset(&d->info, 0, sizeof(d->info));
      d->info.index = i;
    }
    TERMINATE(d->info.name);
    TERMINATE(d->info.driver_name);
    TERMINATE(d->info.driver_info);
    TERMINATE(d->info.unusable_reason);
  }
  r->npvk_device = getenv("NPVK_DEVICE");
  r->select_status = npvk_device_select(NULL, &r->selected);
  if (r->select_status != NPVK_SUCCESS) {
    r->select_error = copy_string(npvk_last_error_message());
  }
  r->local_rank = -1;
  if (npvk_device_local_rank(&r->local_rank, &r->rank_variable) != NPVK_SUCCESS) {
    r->local_rank = -1; /* select_status says what is wrong with it */
  }
  gather_ranks(r);
  gather_cost_model(r);
  return 1;
}

static const char *yes_no(uint8_t flag) {
  return flag ? "yes" : "no";
}

static void print_text_device(const device_entry *d, const report *r) {
  const npvk_device_info *info = &d->info;
  int selected = r->select_status == NPVK_SUCCESS && r->selected == info->index;
  if (d->status != NPVK_SUCCESS) {
    printf("[%u] (no information: %s: %s)\n\n", info->index, npvk_status_string(d->status),
           or_empty(d->error));
    return;
  }
  char api[32], bytes[64];
  format_api_version(info->api_version, api, sizeof(api));
  printf("[%u] %s%s\n", info->index, info->name, selected ? "   <- npvk uses this one" : "");
  printf("    %-34s %s\n", "type", device_type_name(info->type));
  printf("    %-34s 0x%04x / 0x%04x\n", "vendor / device id", info->vendor_id, info->device_id);
  printf("    %-34s %s\n", "Vulkan API", api);
  printf("    %-34s %s (%s)\n", "driver", info->driver_name, info->driver_info);
  if (info->usable) {
    printf("    %-34s yes\n", "usable by npvk");
  } else {
    printf("    %-34s no: %s\n", "usable by npvk", info->unusable_reason);
  }
  printf("    %-34s %s\n", "float64", yes_no(info->float64));
  printf("    %-34s %s\n", "float16", yes_no(info->float16));
  printf("    %-34s %s\n", "int64", yes_no(info->int64));
  printf("    %-34s %s\n", "int16", yes_no(info->int16));
  printf("    %-34s %s\n", "int8", yes_no(info->int8));
  printf("    %-34s %s\n", "8-bit storage", yes_no(info->storage8));
  printf("    %-34s %s\n", "16-bit storage", yes_no(info->storage16));
  printf("    %-34s %s\n", "buffer device address", yes_no(info->buffer_device_address));
  printf("    %-34s %s\n", "host memory import (zero-copy)", yes_no(info->host_memory_import));
  printf("    %-34s %s\n", "timestamps", yes_no(info->timestamps));
  printf("    %-34s %s\n", "unified memory", yes_no(info->unified_memory));
  printf("    %-34s %u bytes\n", "push constants", info->max_push_constants_size);
  printf("    %-34s %u\n", "workgroup invocations", info->max_workgroup_invocations);
  printf("    %-34s %u\n", "workgroup count x", info->max_workgroup_count_x);
  printf("    %-34s %u\n", "subgroup size", info->subgroup_size);
  format_bytes(info->max_memory_allocation_size, bytes, sizeof(bytes));
  printf("    %-34s %s\n", "max allocation", bytes);
  if (info->host_memory_import) {
    printf("    %-34s %llu bytes\n", "imported host pointer alignment",
           (unsigned long long)info->min_imported_host_pointer_alignment);
  }
  format_bytes(info->device_local_bytes, bytes, sizeof(bytes));
  printf("    %-34s %s\n", "device-local memory (largest heap)", bytes);
  if (info->timestamps) {
    printf("    %-34s %g ns\n", "timestamp period", info->timestamp_period_ns);
  }
  printf("\n");
}

static void print_text(const report *r) {
  printf("npvk %s (ABI %u)\n", npvk_version_string(), npvk_abi_version());
  printf("%u Vulkan device%s\n\n", r->count, r->count == 1 ? "" : "s");
  for (uint32_t i = 0; i < r->count; ++i) print_text_device(&r->devices[i], r);

  if (r->select_status != NPVK_SUCCESS) {
    if (r->npvk_device) {
      printf("npvk cannot pick a device: NPVK_DEVICE=\"%s\": %s\n", r->npvk_device,
             or_empty(r->select_error));
      printf("Unset NPVK_DEVICE, or set it to an index or a name substring listed above.\n");
    } else {
      printf("npvk cannot pick a device: %s\n", or_empty(r->select_error));
    }
    return;
  }
  const npvk_device_info *chosen = r->selected < r->count ? &r->devices[r->selected].info : NULL;
  printf("npvk uses device %u: %s\n", r->selected, chosen ? chosen->name : "?");
  if (!by_local_rank(r->npvk_device)) {
    printf("  chosen by NPVK_DEVICE=\"%s\"; unset it to get npvk's own choice.\n", r->npvk_device);
    print_text_cost_model(r);
    return;
  }
  if (r->rank_variable) {
    printf(
        "  chosen by local rank %lld (%s): among the usable devices of the best type,\n"
        "  local rank r gets the one at r modulo their count (NPVK_DEVICE=local-rank,\n"
        "  the default).\n",
        (long long)r->local_rank, r->rank_variable);
  } else {
    printf(
        "  no launcher sets a local rank (OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID,\n"
        "  SLURM_LOCALID, NPVK_LOCAL_RANK): the first usable device in the order discrete\n"
        "  GPU, integrated GPU, virtual GPU, CPU. Set NPVK_DEVICE to an index or a name\n"
        "  substring to make every npvk program that does not choose a device itself use\n"
        "  another one.\n");
  }
  if (r->peers > 1) {
    printf("\nDevices by local rank (one process per device; ranks from %u on wrap around):\n",
           r->peers);
    for (uint32_t rank = 0; rank < r->peers; ++rank) {
      const uint32_t index = r->rank_devices[rank];
      const int here = r->rank_variable && (uint64_t)r->local_rank % r->peers == rank;
      printf("  local rank %u -> [%u] %s", rank, index,
             index < r->count ? r->devices[index].info.name : "?");
      if (here) printf("   <- this process (local rank %lld)", (long long)r->local_rank);
      printf("\n");
    }
  }
  print_text_cost_model(r);
}

static void print_json_device(const device_entry *d) {
  const npvk_device_info *info = &d->info;
  char api[32], uuid[33];
  printf("    {\n      \"index\": %u,\n", info->index);
  if (d->status != NPVK_SUCCESS) {
    printf("      \"error\": {\"status\": ");
    json_string(stdout, npvk_status_string(d->status));
    printf(", \"message\": ");
    json_string(stdout, or_empty(d->error));
    printf("}\n    }");
    return;
  }
  format_api_version(info->api_version, api, sizeof(api));
  for (int i = 0; i < 16; ++i) snprintf(uuid + 2 * i, 3, "%02x", info->driver_uuid[i]);
  printf("      \"name\": ");
  json_string(stdout, info->name);
  printf(",\n      \"type\": \"%s\",\n", device_type_name(info->type));
  printf("      \"vendor_id\": %u,\n      \"device_id\": %u,\n", info->vendor_id, info->device_id);
  printf("      \"api_version\": \"%s\",\n      \"driver_name\": ", api);
  json_string(stdout, info->driver_name);
  printf(",\n      \"driver_info\": ");
  json_string(stdout, info->driver_info);
  printf(",\n      \"driver_uuid\": \"%s\",\n", uuid);
  printf("      \"usable\": %s,\n      \"unusable_reason\": ", info->usable ? "true" : "false");
  json_string_or_null(stdout, info->usable ? NULL : info->unusable_reason);
  printf(",\n");
  const struct {
    const char *key;
    uint8_t value;
  } flags[] = {
      {"float64", info->float64},
      {"float16", info->float16},
      {"int64", info->int64},
      {"int16", info->int16},
      {"int8", info->int8},
      {"storage8", info->storage8},
      {"storage16", info->storage16},
      {"buffer_device_address", info->buffer_device_address},
      {"host_memory_import", info->host_memory_import},
      {"timestamps", info->timestamps},
      {"unified_memory", info->unified_memory},
  };
  for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); ++i) {
    printf("      \"%s\": %s,\n", flags[i].key, flags[i].value ? "true" : "false");
  }
  printf("      \"max_push_constants_size\": %u,\n", info->max_push_constants_size);
  printf("      \"max_workgroup_invocations\": %u,\n", info->max_workgroup_invocations);
  printf("      \"max_workgroup_count_x\": %u,\n", info->max_workgroup_count_x);
  printf("      \"subgroup_size\": %u,\n", info->subgroup_size);
  printf("      \"max_memory_allocation_size\": %llu,\n",
         (unsigned long long)info->max_memory_allocation_size);
  printf("      \"min_imported_host_pointer_alignment\": %llu,\n",
         (unsigned long long)info->min_imported_host_pointer_alignment);
  printf("      \"device_local_bytes\": %llu,\n", (unsigned long long)info->device_local_bytes);
  /* JSON has no NaN or infinity; a driver that reports one gets null. */
  double period = info->timestamp_period_ns;
  if (period == period && period - period == 0.0) {
    printf("      \"timestamp_period_ns\": %.17g\n    }", period);
  } else {
    printf("      \"timestamp_period_ns\": null\n    }");
  }
}

static void print_json(const report *r) {
  printf("{\n  \"npvk_version\": ");
  json_string(stdout, npvk_version_string());
  printf(",\n  \"abi_version\": %u,\n  \"npvk_device_env\": ", npvk_abi_version());
  json_string_or_null(stdout, r->npvk_device);
  printf(",\n  \"devices\": [\n");
  for (uint32_t i = 0; i < r->count; ++i) {
    print_json_device(&r->devices[i]);
    printf(i + 1 < r->count ? ",\n" : "\n");
  }
  printf("  ],\n  \"local_rank\": ");
  if (r->rank_variable) {
    printf("{\"rank\": %lld, \"variable\": ", (long long)r->local_rank);
    json_string(stdout, r->rank_variable);
    printf("},\n");
  } else {
    printf("null,\n");
  }
  printf("  \"devices_by_local_rank\": [");
  for (uint32_t rank = 0; rank < r->peers; ++rank) {
    printf(rank ? ", %u" : "%u", r->rank_devices[rank]);
  }
  printf("],\n  \"cost_model\": ");
  if (r->cost_known) {
    const npvk_cost_model *c = &r->cost;
    printf(
        "{\"device_flush_ns\": %g, \"device_ns_per_byte\": %g, \"device_math_ns\": %g, "
        "\"device_pow_ns\": %g, \"device_narrow_ns\": %g, \"device_dispatch_ns\": %g, "
        "\"host_ns_per_byte\": %g, \"host_math_ns\": %g, \"host_pow_ns\": %g, "
        "\"host_threads\": %u},\n",
        c->device_flush_ns, c->device_ns_per_byte, c->device_math_ns, c->device_pow_ns,
        c->device_narrow_ns, c->device_dispatch_ns, c->host_ns_per_byte, c->host_math_ns,
        c->host_pow_ns, c->host_threads);
  } else {
    printf("null,\n");
  }
  if (r->select_status == NPVK_SUCCESS) {
    printf("  \"selected\": %u,\n  \"selection_error\": null\n}\n", r->selected);
  } else {
    printf("  \"selected\": null,\n  \"selection_error\": {\"status\": ");
    json_string(stdout, npvk_status_string(r->select_status));
    printf(", \"message\": ");
    json_string(stdout, or_empty(r->select_error));
    printf("}\n}\n");
  }
}

/* Opens a context on the selected device to read the cached figures; measuring
 * them needs NumPy's loops, which only the Python package has. */
static void gather_cost_model(report *r) {
  if (r->select_status != NPVK_SUCCESS) return;
  char index[16];
  snprintf(index, sizeof index, "%u", r->selected);
  npvk_context_options options;
  memset(&options, 0, sizeof options);
  options.struct_size = (uint32_t)sizeof options;
  options.device = index;
  npvk_context ctx;
  if (npvk_context_create(&options, &ctx) != NPVK_SUCCESS) return;
  r->cost.struct_size = (uint32_t)sizeof r->cost;
  r->cost_known = npvk_context_get_cost_model(ctx, 0, &r->cost) == NPVK_SUCCESS && r->cost.measured;
  npvk_context_release(ctx);
}

static void print_text_cost_model(const report *r) {
  if (!r->cost_known) {
    printf(
        "\nCost model: not measured on this device yet (the first Python program with npvk\n"
        "that flushes work measures it, in about 0.3 s, and keeps it in the kernel cache).\n");
    return;
  }
  const npvk_cost_model *c = &r->cost;
  printf("\nCost model (measured once, kept in the kernel cache; see docs/architecture.md):\n");
  printf(
      "  device: flush %.1f us, dispatch %.1f us, %.4f ns per byte, exp %.2f ns, pow %.2f ns, "
      "narrow access %.2f ns\n",
      c->device_flush_ns / 1e3, c->device_dispatch_ns / 1e3, c->device_ns_per_byte,
      c->device_math_ns, c->device_pow_ns, c->device_narrow_ns);
  printf("  host (NumPy's loops, one thread): %.4f ns per byte, exp %.2f ns, pow %.2f ns\n",
         c->host_ns_per_byte, c->host_math_ns, c->host_pow_ns);
  printf("  host threads: %u (elementwise work kept on the host is split over them)\n",
         c->host_threads);
}

/* Without a loader there is nothing to list; say why in the form the caller
 * asked for, so that scripts reading --json still get a document. */
static int report_fatal(int json, npvk_status status, const char *message) {
  fprintf(stderr, "npvk-info: %s: %s\n", npvk_status_string(status), message);
  if (json) {
    printf("{\n  \"npvk_version\": ");
    json_string(stdout, npvk_version_string());
    printf(",\n  \"abi_version\": %u,\n  \"error\": {\"status\": ", npvk_abi_version());
    json_string(stdout, npvk_status_string(status));
    printf(", \"message\": ");
    json_string(stdout, message);
    printf("}\n}\n");
  }
  return 1;
}

int main(int argc, char **argv) {
  int json = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--json") == 0) {
      json = 1;
    } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      fputs(kUsage, stdout);
      return 0;
    } else {
      fprintf(stderr, "npvk-info: unknown argument '%s'\n\n%s", argv[i], kUsage);
      return 2;
    }
  }

  /* A program built against one ABI and run with a library of another would
   * read npvk_device_info wrongly; say so rather than print garbage. */
  if (npvk_abi_version() != NPVK_ABI_VERSION) {
    fprintf(stderr, "npvk-info: built for npvk ABI %u but the loaded library has ABI %u\n",
            (unsigned)NPVK_ABI_VERSION, npvk_abi_version());
    return 1;
  }

  report r;
  memset(&r, 0, sizeof(r));
  npvk_status status = npvk_device_count(&r.count);
  if (status != NPVK_SUCCESS) {
    /* Copy before any other npvk call replaces the message. */
    char *message = copy_string(npvk_last_error_message());
    int rc = report_fatal(json, status, message ? message : "");
    free(message);
    return rc;
  }
  if (!gather(&r)) {
    fprintf(stderr, "npvk-info: out of memory\n");
    return 1;
  }

  if (json) {
    print_json(&r);
  } else {
    print_text(&r);
  }
  if (r.select_status != NPVK_SUCCESS) {
    fprintf(stderr, "npvk-info: %s: %s\n", npvk_status_string(r.select_status),
            or_empty(r.select_error));
  }
  int rc = r.select_status == NPVK_SUCCESS ? 0 : 1;
  for (uint32_t i = 0; i < r.count; ++i) free((void *)r.devices[i].error);
  free(r.devices);
  free(r.rank_devices);
  free((void *)r.select_error);
  return rc;
}

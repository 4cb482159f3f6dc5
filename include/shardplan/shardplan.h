/// The whole library in one include, for programs built against an installed shardplan. Inside the
/// project each file includes the one header per concept it needs (docs/architecture.md lists them
/// by layer): model, hardware, layout, presets, constants (inputs); collectives, compute, memory, comm,
/// topology, schedule (cost terms); simulate (pipeline); plan (one evaluation); search; io, hf (JSON);
/// validate, calibrate; report, table, sweep, export, trace (writers); api.
///
///   #include <shardplan/shardplan.h>
///   shardplan::Plan p = shardplan::evaluate(shardplan::preset_model("llama3-70b"), cluster, layout);
#pragma once
#include "shardplan/api.h"
#include "shardplan/calibrate.h"
#include "shardplan/collectives.h"
#include "shardplan/comm.h"
#include "shardplan/compute.h"
#include "shardplan/constants.h"
#include "shardplan/enums.h"
#include "shardplan/error.h"
#include "shardplan/export.h"
#include "shardplan/hardware.h"
#include "shardplan/hf.h"
#include "shardplan/import.h"
#include "shardplan/io.h"
#include "shardplan/layout.h"
#include "shardplan/memory.h"
#include "shardplan/model.h"
#include "shardplan/plan.h"
#include "shardplan/presets.h"
#include "shardplan/report.h"
#include "shardplan/schedule.h"
#include "shardplan/search.h"
#include "shardplan/pipeline.h"
#include "shardplan/simulate.h"
#include "shardplan/suggest.h"
#include "shardplan/sweep.h"
#include "shardplan/table.h"
#include "shardplan/toml.h"
#include "shardplan/topology.h"
#include "shardplan/trace.h"
#include "shardplan/validate.h"

// kerntune-worker --compile: the daemon's compile process. Reads compile requests
// (tuner/compile/compile_protocol.hpp) one JSON line at a time, runs NVRTC and answers one line
// each; never touches the CUDA driver. It exists so that NVRTC crashing, aborting or running away
// takes down this process and not the daemon (engine/compile_client.hpp restarts it).
//
//   {"op":"compile","request":{...}}  ->  {"ok":true,"result":{...}}
//   {"op":"shutdown"}                 ->  {"ok":true}, then exit
//   anything else                     ->  {"ok":false,"error":"..."}
//
// Test hook, never set in production: KERNTUNE_TEST_COMPILE_FAULT=<how>:<option>, with <how>
// segv, abort or hang, makes a request whose options contain <option> (e.g. -DBLOCK_M=64) die
// of SIGSEGV, abort or never answer instead of compiling.
#pragma once

#include <string>

namespace kt {

struct CompileServerAnswer {
  std::string line;
  bool exit_after = false;
};

CompileServerAnswer handle_compile_line(const std::string& line);

}  // namespace kt

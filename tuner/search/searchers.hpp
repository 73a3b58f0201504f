// The searchers behind make_searcher (searcher.hpp), and what they share.
#pragma once

#include <memory>

#include "tuner/search/searcher.hpp"

namespace kt::search {

std::unique_ptr<Searcher> make_exhaustive();
std::unique_ptr<Searcher> make_random(std::uint64_t seed);
std::unique_ptr<Searcher> make_model(std::uint64_t seed);
std::unique_ptr<Searcher> make_local(std::uint64_t seed);
std::unique_ptr<Searcher> make_predicted(std::uint64_t seed);

// Same template and every axis equal but one: a mutation step of the local searchers.
bool one_axis_apart(const SearchCandidate& a, const SearchCandidate& b);

// The expected improvement below a target of a normal prediction with spread sigma, z being
// (target - mean) / sigma: sigma (z Phi(z) + phi(z)).
double expected_improvement(double z, double sigma);

// The first `count` untaken candidates in `order`.
std::vector<std::size_t> first_untaken(const std::vector<std::size_t>& order,
                                       const std::vector<bool>& taken, std::size_t count);

// A candidate's observed time, or a penalty for a failed one: slower than anything seen, so a
// learner steers away from its neighbourhood without the scale blowing up.
std::vector<double> observed_log_times(const SearchState& state);

}  // namespace kt::search

"""The bad-input table of lib's public maths functions (used by tests/unit/test_bad_input.py).

For every public function and class of the maths modules, one valid call (``BASELINES``); each
argument in turn is replaced by values of the wrong kind, out of range or not finite
(``bad_values``), and each call is classified (``classify``):

* ``right``: it returned the same result as the valid call, for a value that means the same
  (an int for a float, a list or a tensor for an array, a numpy scalar);
* ``accepted``: it returned a finite result for a different value that the function documents
  as valid (listed, for review);
* ``refused``: a ValueError whose message names the argument;
* anything else is a defect: a ValueError that does not name the argument, any other exception
  (a TypeError or MemoryError from inside numpy or torch), a result holding NaN, or a call that
  takes more than a second.
"""

from __future__ import annotations

import dataclasses
import decimal
import fractions
import math
import re
import signal
import time
from collections.abc import Callable

import mpmath
import numpy as np
import pandas as pd
import torch

from lib import (
    approximation,
    atlas,
    boltzmann,
    context_ids,
    contextual,
    cross,
    cross_attention,
    exact,
    feedforward,
    hardmax,
    interpolation,
    layers,
    lemma1,
    lookup,
    lookup_bounds,
    maxaffine,
    memorization,
    metrics,
    models,
    powers_of_ten,
    quantize,
    seeds,
    separation,
    sum_of_linear,
    targets,
)
from lib.experiments import tables

#: The maths modules whose public functions and classes the table covers.
MODULES = (approximation, atlas, boltzmann, context_ids, contextual, cross, cross_attention, exact,
           feedforward, hardmax, interpolation, layers, lemma1, lookup, lookup_bounds, maxaffine,
           memorization, metrics, models, powers_of_ten, quantize, seeds, separation,
           sum_of_linear, tables, targets)  # fmt: skip

NAN, INF = math.nan, math.inf
SECONDS = 1.0


def _grid(m: int = 3) -> np.ndarray:
    return maxaffine.grid_centres(m, 2)


def _vocab() -> np.ndarray:
    return np.array([[0.0, 1.0], [1.0, 0.5], [2.0, 2.5]])


def _wave(p):
    return targets.wave(np.asarray(p))


def _layer() -> layers.SelfAttention:
    return layers.SelfAttention(2, head_dim=1, seed=1)


def _memorizer():
    X = np.array([[[0.0, 1.0], [1.0, 0.5]], [[1.0, 0.5], [2.0, 2.5]]])
    return memorization.memorizing_transformer(X, np.array([[1.0, 0.0], [0.0, 1.0]]), dps=40)


def _b52_points() -> np.ndarray:
    """Points of the 3-grid: one in the middle cube, one in a corner cube, one on an edge."""
    return np.array([[0.55, 0.5], [0.05, 0.05], [0.45, 0.1]])


def _first(x, *_):
    return np.asarray(x, dtype=float)[..., 0]


# name -> (callable, args as a dict of keyword values; positional-only order is the dict's)
def baselines() -> dict[str, tuple[Callable, dict]]:
    a = [1.0, 2.0, 3.0]
    X2 = np.array([[[0.0, 1.0], [1.0, 0.5]], [[1.0, 0.5], [2.0, 2.5]]])
    rank_one = contextual.RankOneAttention(_vocab(), 2)
    pair = np.array([[[0.0, 1.0], [1.0, 0.5]], [[1.0, 0.5], [0.0, 1.0]]])
    return {
        "boltzmann.boltz": (boltzmann.boltz, dict(a=a, beta=1.0, dim=-1)),
        "boltzmann.boltz_bounds": (boltzmann.boltz_bounds, dict(a=a, dim=-1)),
        "boltzmann.dboltz_dbeta": (boltzmann.dboltz_dbeta, dict(a=a, beta=1.0, dim=-1)),
        "boltzmann.linf_lipschitz": (
            boltzmann.linf_lipschitz,
            dict(op=boltzmann.boltz, a=torch.tensor([a, [0.0, 1.0, 5.0]], dtype=torch.float64)),
        ),
        "boltzmann.expansion_ratio": (
            boltzmann.expansion_ratio,
            dict(
                op=boltzmann.boltz,
                a=torch.tensor([a], dtype=torch.float64),
                b=torch.tensor([[1.0, 2.0, 3.5]], dtype=torch.float64),
            ),
        ),
        "boltzmann.soft_max_lse": (boltzmann.soft_max_lse, dict(a=a, beta=1.0, dim=-1)),
        "boltzmann.mellowmax": (boltzmann.mellowmax, dict(a=a, omega=1.0, dim=-1)),
        "lemma1.lemma1_gap": (lemma1.lemma1_gap, dict(n=3)),
        "lemma1.lemma1_bound": (lemma1.lemma1_bound, dict(n=3, r=1.0, log10=False)),
        "lemma1.lemma1_digits": (lemma1.lemma1_digits, dict(r=1.0)),
        "lemma1.one_winner_deficit": (lemma1.one_winner_deficit, dict(n=3)),
        "lemma1.lattice_vectors": (lemma1.lattice_vectors, dict(n=3, K=3, spacing=10.0)),
        "lemma1.lemma1_check": (
            lemma1.lemma1_check,
            dict(vectors=lemma1.lattice_vectors(3, 4, 10.0), dps=40),
        ),
        "lemma1.lemma1_search": (
            lemma1.lemma1_search,
            dict(n=2, K=3, restarts=1, steps=3, seed=0, margin=0.01),
        ),
        "contextual.as_head_dim": (contextual.as_head_dim, dict(head_dim=1, d=2)),
        "separation.tokenwise_separation": (separation.tokenwise_separation, dict(X=X2)),
        "separation.strict_constants": (
            separation.strict_constants,
            dict(vocab=_vocab(), slack=0.01),
        ),
        "contextual.score_separation": (contextual.score_separation, dict(layer=rank_one)),
        "separation.vocabulary": (separation.vocabulary, dict(X=X2)),
        "separation.projection_constant": (
            separation.projection_constant,
            dict(w=[1.0, 0.3], vocab=_vocab()),
        ),
        "separation.projection_bound": (
            separation.projection_bound,
            dict(vocab_size=3, d=2),
        ),
        "separation.projection_miss_expectation": (
            separation.projection_miss_expectation,
            dict(vocab_size=3, d=2),
        ),
        "separation.miss_exponent": (
            separation.miss_exponent,
            dict(vocab_sizes=[5, 10, 20], rates=[0.6, 0.55, 0.5], draws=400),
        ),
        "separation.dimension_exponent": (
            separation.dimension_exponent,
            dict(dims=[2, 4, 8], rates=[0.7, 0.65, 0.6], draws=400),
        ),
        "separation.projection_rate_check": (
            separation.projection_rate_check,
            dict(
                vocab_sizes=[5, 10, 5, 10],
                dims=[2, 2, 4, 4],
                rates=[0.6, 0.6, 0.55, 0.55],
                draws=400,
            ),
        ),
        "separation.best_direction": (
            separation.best_direction,
            dict(vocab=_vocab(), draws=8, seed=0),
        ),
        "contextual.RankOneAttention": (
            contextual.RankOneAttention,
            dict(vocab=_vocab(), n=2, head_dim=1, seed=0),
        ),
        "contextual.theorem2_delta": (
            contextual.theorem2_delta,
            dict(n=2, vocab_size=3, d=2, r_min=1.0, r_max=3.0, eps=0.5, c_w=0.1),
        ),
        "contextual.theorem2_projection": (
            contextual.theorem2_projection,
            dict(vocab=_vocab(), n=2, seed=0, slack=0.01, chunk=2),
        ),
        "context_ids.subset_sequences": (
            context_ids.subset_sequences,
            dict(vocab=_vocab(), n=2),
        ),
        "hardmax.hardmax_counterexample": (
            hardmax.hardmax_counterexample,
            dict(v=[1.0, 2.0]),
        ),
        "hardmax.id_difference": (
            hardmax.id_difference,
            dict(layer=rank_one, pair=pair, token=0, dps=30),
        ),
        "hardmax.id_distance": (
            hardmax.id_distance,
            dict(layer=rank_one, pair=pair, token=0, dps=30),
        ),
        "hardmax.hardmax_trials": (
            hardmax.hardmax_trials,
            dict(pair=hardmax.hardmax_counterexample([1.0, 2.0]), draws=20, seed=0),
        ),
        "context_ids.context_ids": (
            context_ids.context_ids,
            dict(vocab=_vocab(), n=2, digits_beyond=10),
        ),
        "interpolation.interpolation_knots": (
            interpolation.interpolation_knots,
            dict(z=[0.0, 1.0, 3.0]),
        ),
        "interpolation.interpolating_ffn": (
            interpolation.interpolating_ffn,
            dict(z=[0.0, 1.0, 3.0], y=[1.0, -1.0, 2.0]),
        ),
        "interpolation.interpolation_mp": (
            interpolation.interpolation_mp,
            dict(z=[0.0, 1.0, 3.0], y=[1.0, -1.0, 2.0], dps=30),
        ),
        "memorization.corollary1_parameter_count": (
            memorization.corollary1_parameter_count,
            dict(n=2, N=3, d=2, s=1),
        ),
        "memorization.weight_lower_bound": (
            memorization.weight_lower_bound,
            dict(z=[0.0, 1.0, 3.0], targets=[[1.0], [-1.0], [2.0]]),
        ),
        "memorization.memorizing_transformer": (
            memorization.memorizing_transformer,
            dict(X=X2, Y=X2[:, ::-1] + 1.0, dps=40, seed=0, directions=10),
        ),
        "interpolation.interpolation_price": (
            interpolation.interpolation_price,
            dict(spacings=[1.0, 0.1], labels=[1.0, -1.0, 2.0], base=1.0),
        ),
        "memorization.float64_memorization": (
            memorization.float64_memorization,
            dict(X=X2[..., :1] + 0.5, Y=np.array([[1.0, 0.0], [0.0, 1.0]]), gamma=1.0),
        ),
        "atlas.digits_needed": (atlas.digits_needed, dict(gap=1e-3, spread=1.0)),
        "atlas.round_to_digits": (
            atlas.round_to_digits,
            dict(values=np.array([0.123, 0.456]), digits=2, spread=1.0, origin=0.0),
        ),
        "atlas.bits_per_number": (atlas.bits_per_number, dict(largest=10.0, resolution=0.01)),
        "atlas.lipschitz_packing_bits": (
            atlas.lipschitz_packing_bits,
            dict(lipschitz=1.0, eps=0.1, dim=2),
        ),
        "atlas.memorization_bits": (atlas.memorization_bits, dict(n_items=10, n_labels=3)),
        "quantize.cell_representatives": (
            quantize.cell_representatives,
            dict(m=3, low=0.0, high=1.0),
        ),
        "quantize.quantizer": (
            quantize.quantizer,
            dict(m=3, d=1, tau=0.01, low=0.0, high=1.0),
        ),
        "quantize.quantizer_float64_error": (
            quantize.quantizer_float64_error,
            dict(m=3, d=1, tau=0.01, low=0.0, high=1.0, x_max=1.0),
        ),
        "quantize.duplicate_cell_measure": (
            quantize.duplicate_cell_measure,
            dict(m=3, n=2, d=1),
        ),
        "quantize.ramp_measure": (
            quantize.ramp_measure,
            dict(m=3, n=2, d=1, tau=0.01, low=0.0, high=1.0),
        ),
        "approximation.ks_approximator": (
            approximation.ks_approximator,
            dict(f=targets.mean_product, m=3, n=2, d=1, tau=0.01, seed=0),
        ),
        "approximation.require_equivariant": (
            approximation.require_equivariant,
            dict(f=targets.mean_product, n=2, d=1, probes=4, seed=0),
        ),
        "quantize.bad_sets": (
            quantize.bad_sets,
            dict(X=np.array([[[0.2], [0.5]]]), m=3, tau=0.01, low=0.0, high=1.0),
        ),
        "tables.ks_error_row": (
            tables.ks_error_row,
            dict(f=targets.mean_product, m=3, n=2, d=1, tau=0.01, n_samples=200, seed=0),
        ),
        "tables.price_row": (
            tables.price_row,
            dict(f=targets.mean_product, m=3, n=2, d=1, tau=0.01, gamma=1.0),
        ),
        "maxaffine.affine_scores": (
            maxaffine.affine_scores,
            dict(x=[[0.2, 0.3]], A=np.eye(2), b=[0.0, 0.1]),
        ),
        "maxaffine.max_affine": (
            maxaffine.max_affine,
            dict(x=[[0.2, 0.3]], A=np.eye(2), b=[0.0, 0.1]),
        ),
        "maxaffine.cell_index": (
            maxaffine.cell_index,
            dict(x=[[0.2, 0.3]], A=np.eye(2), b=[0.0, 0.1]),
        ),
        "maxaffine.partition_indicator": (
            maxaffine.partition_indicator,
            dict(x=[[0.2, 0.3]], A=np.eye(2), b=[0.0, 0.1]),
        ),
        "maxaffine.margin": (maxaffine.margin, dict(x=[[0.2, 0.3]], A=np.eye(2), b=[0.0, 0.1])),
        "maxaffine.soft_indicator": (
            maxaffine.soft_indicator,
            dict(x=[[0.2, 0.3]], A=np.eye(2), b=[0.0, 0.1], beta=5.0),
        ),
        "maxaffine.indicator_error": (
            maxaffine.indicator_error,
            dict(x=[[0.2, 0.3]], A=np.eye(2), b=[0.0, 0.1], beta=5.0),
        ),
        "maxaffine.indicator_bound": (
            maxaffine.indicator_bound,
            dict(beta=5.0, margin=[0.1, 0.2], n_cells=4),
        ),
        "maxaffine.voronoi_affine": (maxaffine.voronoi_affine, dict(centres=_grid())),
        "maxaffine.grid_centres": (
            maxaffine.grid_centres,
            dict(m=3, dim=2, low=0.0, high=1.0),
        ),
        "maxaffine.grid_margin": (
            maxaffine.grid_margin,
            dict(x=[[0.2, 0.3]], m=3, low=0.0, high=1.0),
        ),
        "lookup.hard_lookup": (
            lookup.hard_lookup,
            dict(x=[[0.2, 0.3]], centres=_grid(), values=np.arange(9.0)),
        ),
        "lookup.soft_lookup": (
            lookup.soft_lookup,
            dict(x=[[0.2, 0.3]], centres=_grid(), values=np.arange(9.0), beta=50.0),
        ),
        "lookup.nadaraya_watson": (
            lookup.nadaraya_watson,
            dict(x=[[0.2, 0.3]], centres=_grid(), values=np.arange(9.0), bandwidth=0.1),
        ),
        "lookup_bounds.grid_lookup_bound": (
            lookup_bounds.grid_lookup_bound,
            dict(lipschitz=2 * math.pi, m=8, kappa=10.0),
        ),
        "sum_of_linear.SumOfLinear": (
            sum_of_linear.SumOfLinear,
            dict(A=np.ones((1, 2, 2)), B=np.ones((1, 1, 1)), C=np.zeros((2, 1))),
        ),
        "lookup.attention_approximator": (
            lookup.attention_approximator,
            dict(f=_wave, centres=_grid(), beta=50.0, chunk=64),
        ),
        "lookup.seq2seq_approximator": (
            lookup.seq2seq_approximator,
            dict(
                f=lambda p: np.stack([_wave(p), _wave(p)], 1),
                centres=_grid(),
                beta=50.0,
                n_positions=2,
                bonus=50.0,
            ),
        ),
        "cross.context_tokens": (
            cross.context_tokens,
            dict(centres=_grid(), values=np.arange(9.0)),
        ),
        "cross.cross_attention_approximator": (
            cross.cross_attention_approximator,
            dict(f=_wave, centres=_grid(), beta=50.0),
        ),
        "cross.context_length": (
            cross.context_length,
            dict(
                f=_wave,
                dim=2,
                errors=[0.5],
                kappa=10.0,
                points=np.random.default_rng(0).uniform(size=(50, 2)),
                m_max=4,
            ),
        ),
        "cross.product_lookup": (
            cross.product_lookup,
            dict(g=_first, points=[[0.2, 0.3]], m=3, kappa=10.0),
        ),
        "cross.product_context_length": (
            cross.product_context_length,
            dict(g=_first, dim=2, errors=[0.5], kappa=10.0, m_max=4, resolution=21),
        ),
        "tables.lookup_error_row": (
            tables.lookup_error_row,
            dict(f=_wave, m=3, kappa=10.0, points=[[0.2, 0.3], [0.5, 0.5]]),
        ),
        "exact.to_mpf": (exact.to_mpf, dict(name="value", value=1.5)),
        "exact.boltz_mp": (exact.boltz_mp, dict(a=a, beta=1, dps=30)),
        "exact.lse_mp": (exact.lse_mp, dict(a=a, dps=30)),
        "exact.softmax_entropy_mp": (exact.softmax_entropy_mp, dict(a=a, dps=30)),
        "exact.min_gap": (exact.min_gap, dict(values=a, dps=30, distinct=True)),
        "exact.attention_mp": (
            exact.attention_mp,
            dict(X=np.array([[0.0, 1.0], [1.0, 0.5]]), layer=_layer(), dps=30),
        ),
        "exact.project_mp": (exact.project_mp, dict(rows=[[1.0, 2.0]], v=[0.5, 0.5])),
        "exact.mp_seconds": (exact.mp_seconds, dict(dps=50, arithmetic=10, transcendental=2)),
        "exact.require_mp_seconds": (
            exact.require_mp_seconds,
            dict(what="a test", dps=50, arithmetic=10, transcendental=2),
        ),
        "exact.min_distance": (
            exact.min_distance,
            dict(points=[[0.0, 1.0], [1.0, 0.5]], dps=30, distinct=True),
        ),
        "exact.boltz_pair_mp": (exact.boltz_pair_mp, dict(x=0.2, y=1.0, dps=30)),
        "powers_of_ten.pow10_mp": (powers_of_ten.pow10_mp, dict(x=-3.5, dps=30)),
        "boltzmann.dscaled_boltz_dbeta": (
            boltzmann.dscaled_boltz_dbeta,
            dict(a=a, beta=1.0, dim=-1),
        ),
        "lemma1.threshold_lattice": (lemma1.threshold_lattice, dict(n=3, K=4, margin=0.01)),
        "context_ids.id_shifts": (
            context_ids.id_shifts,
            dict(run=context_ids.context_ids(_vocab(), 2, digits_beyond=10)),
        ),
        "quantize.jump": (quantize.jump, dict(X=np.array([[[0.2], [0.5]]]), a=1 / 3)),
        "quantize.quantized_jump": (
            quantize.quantized_jump,
            dict(X=np.array([[[0.2], [0.5]]]), m=3, tau=0.01, a=1 / 3, low=0.0, high=1.0),
        ),
        "approximation.error_along_line": (
            approximation.error_along_line,
            dict(f=targets.mean_product, m=3, others=[0.5], tau=0.01, gamma=1.0),
        ),
        "metrics.uniform_sampler": (
            metrics.uniform_sampler,
            dict(n=2, d=1, low=0.0, high=1.0),
        ),
        "metrics.outputs": (
            metrics.outputs,
            dict(f=targets.mean_product, X=np.full((3, 2, 1), 0.5), name="f"),
        ),
        "metrics.lp_error": (
            metrics.lp_error,
            dict(
                f=targets.mean_product,
                g=targets.max_product,
                p=2.0,
                sampler=metrics.uniform_sampler(2, 1),
                n_samples=50,
                seed=0,
            ),
        ),
        "metrics.lp_from_errors": (metrics.lp_from_errors, dict(errors=[0.1, -0.2], p=2.0)),
        "metrics.sup_error": (
            metrics.sup_error,
            dict(
                f=targets.mean_product,
                g=targets.max_product,
                sampler=metrics.uniform_sampler(2, 1),
                n_samples=50,
                seed=0,
            ),
        ),
        "metrics.error_summary": (metrics.error_summary, dict(errors=[0.1, -0.2])),
        "seeds.band": (seeds.band, dict(values=[0.1, 0.3, 0.2])),
        "seeds.separated": (
            seeds.separated,
            dict(a=[1.0, 2.0, 3.0, 3.5, 3.7], b=[4.0, 5.0, 6.0, 6.5, 7.0]),
        ),
        "seeds.order_p_value": (seeds.order_p_value, dict(n_a=5, n_b=5)),
        "seeds.band_text": (seeds.band_text, dict(values=[0.1, 0.3, 0.2], spec=".2f")),
        "seeds.reached_band_text": (seeds.reached_band_text, dict(epochs=[412, 388, 400])),
        "targets.mean_product": (targets.mean_product, dict(X=np.full((3, 2, 1), 0.5))),
        "targets.max_product": (targets.max_product, dict(X=np.full((3, 2, 1), 0.5))),
        "targets.wave": (targets.wave, dict(p=[[0.2, 0.3]])),
        "targets.disk": (targets.disk, dict(p=[[0.2, 0.3]])),
        "targets.mean_product_flat": (targets.mean_product_flat, dict(p=[[0.2, 0.3, 0.5]])),
        "targets.wave_and_product": (targets.wave_and_product, dict(p=[[0.2, 0.3]])),
        "targets.tilted_sine": (targets.tilted_sine, dict(p=[[0.2], [0.7]])),
        "targets.sine_product": (targets.sine_product, dict(p=[[0.2, 0.3]])),
        "maxaffine.grid_margin_summary": (
            maxaffine.grid_margin_summary,
            dict(x=_b52_points(), margins=maxaffine.grid_margin(_b52_points(), 3), m=3),
        ),
        "lookup_bounds.cells_per_axis": (
            lookup_bounds.cells_per_axis,
            dict(lipschitz=math.pi, dim=2, eps=0.1),
        ),
        "cross.per_position_costs": (
            cross.per_position_costs,
            dict(f=targets.mean_product_flat, X=[[0.2, 0.3], [0.6, 0.9]], m=2, kappa=10.0),
        ),
        "atlas.random_vocabulary": (atlas.random_vocabulary, dict(size=4, dim=2, seed=0)),
        "atlas.ks_separations": (
            atlas.ks_separations,
            dict(vocab=_vocab(), n=2, seed=0, measure=True),
        ),
        "atlas.ks_bits": (
            atlas.ks_bits,
            dict(
                approximator=approximation.ks_approximator(
                    targets.mean_product, 3, 2, 1, 0.01, gamma=1.0
                )
            ),
        ),
        "tables.ks_costs": (
            tables.ks_costs,
            dict(f=targets.mean_product, m=3, n=2, d=1, tau=0.01, n_samples=200, seed=0),
        ),
        "atlas.lookup_layer_costs": (
            atlas.lookup_layer_costs,
            dict(f=targets.sine_product, m=3, dim=2, kappa=10.0),
        ),
        "atlas.lhsl_bits": (
            atlas.lhsl_bits,
            dict(
                lengths=pd.DataFrame(
                    {
                        "dim": [1, 1],
                        "error": [0.2, 0.1],
                        "m": [2, 3],
                        "N": [2, 3],
                        "β": [40.0, 90.0],
                    }
                ),
                built={(1, 2): atlas.lookup_layer_costs(targets.sine_product, 2, 1, 10.0)},
            ),
        ),
        "atlas.lhsl_costs": (
            atlas.lhsl_costs,
            dict(f=targets.mean_product_flat, X=[[0.2, 0.3], [0.6, 0.9]], m=2, kappa=10.0),
        ),
        "layers.SelfAttention": (layers.SelfAttention, dict(d=2, head_dim=1, seed=0)),
        "layers.TiedSelfAttention": (
            layers.TiedSelfAttention,
            dict(d=2, seed=0, fixed_projection=[0.6, 0.8], gamma=2.0),
        ),
        "cross_attention.CrossAttention": (
            cross_attention.CrossAttention,
            dict(d_q=2, d_kv=3, head_dim=1, seed=0),
        ),
        "feedforward.FeedForward": (feedforward.FeedForward, dict(d_in=2, width=3, seed=0)),
        "models.TokenTagger": (
            models.TokenTagger,
            dict(vocab_size=10, n_tags=3, d=4, n_layers=1, seed=0),
        ),
        "models.PatchAttentionClassifier": (
            models.PatchAttentionClassifier,
            dict(image_size=8, patch=4, d=4, n_classes=3, seed=0),
        ),
    }


# --- the bad values, by the kind of the valid value they replace -----------------------------


def _kind(value) -> str:
    if isinstance(value, bool | np.bool_):
        return "flag"
    if isinstance(value, torch.dtype):
        return "dtype"
    if isinstance(value, int | np.integer):
        return "int"
    if isinstance(value, float | np.floating):
        return "float"
    if isinstance(value, str):
        return "str"
    if isinstance(value, np.ndarray | list | tuple | torch.Tensor):
        return "array"
    if callable(value) and not isinstance(value, torch.nn.Module):
        return "callable"
    return "object"


def _same_arrays(value):
    """``(label, value)`` pairs meaning the same as an array ``value``: a list, a tensor, a
    read-only view, a view with negative strides (``x[::-1]`` of a reversed copy), a
    Fortran-ordered copy and a non-contiguous tensor (a transposed copy, transposed back)."""
    arr = np.asarray(value.detach() if isinstance(value, torch.Tensor) else value, dtype=float)
    view = arr.copy()
    view.flags.writeable = False
    reversed_view = np.ascontiguousarray(arr[::-1])[::-1] if arr.ndim else arr.copy()
    pairs = [
        ("as list", arr.tolist()),
        ("as Tensor", torch.from_numpy(arr.copy())),
        ("as a read-only view", view),
        ("as a view with negative strides", reversed_view),
        ("as a Fortran-ordered array", np.asfortranarray(arr)),
    ]
    if arr.ndim >= 2:
        strided = torch.from_numpy(np.ascontiguousarray(arr.swapaxes(0, 1))).transpose(0, 1)
        pairs.append(("as a non-contiguous tensor", strided))
    return pairs


def bad_values(value) -> list[tuple[str, object, bool]]:
    """``(label, value, same)`` triples; ``same`` marks a value meaning the same as ``value``."""
    kind = _kind(value)
    common = [("None", None, False), ("a string", "abc", False), ("an object", object(), False)]
    if kind == "flag":
        return common + [
            ("the string 'False'", "False", False),
            ("the int 2", 2, False),
            ("the int 1", 1, False),
            ("numpy bool", np.bool_(value), True),
        ]
    if kind == "dtype":
        return common + [("torch.int64", torch.int64, False), ("numpy float64", np.float64, False)]
    if kind == "int":
        return common + [
            ("0", 0, False),
            ("-1", -1, False),
            ("2.5", 2.5, False),
            ("True", True, False),
            ("the string of it", str(value), False),
            ("10**18", 10**18, False),
            ("NaN", NAN, False),
            ("numpy int64", np.int64(value), True),
            ("a 1-element list", [value], False),
        ]
    if kind == "float":
        return common + [
            ("NaN", NAN, False),
            ("inf", INF, False),
            ("-inf", -INF, False),
            ("True", True, False),
            ("complex", complex(value, 1.0), False),
            ("the string of it", str(value), False),
            ("0", 0.0, False),
            ("-1", -1.0, False),
            ("1e308", 1e308, False),
            ("5e-324", 5e-324, False),
            ("a 1-element list", [value], False),
            ("numpy float64", np.float64(value), True),
            ("a 0-d tensor", torch.tensor(float(value), dtype=torch.float64), True),
            ("a Fraction", fractions.Fraction(float(value)), True),
            ("a Decimal", decimal.Decimal(float(value)), True),
        ]
    if kind == "array":
        arr = np.asarray(value.detach() if isinstance(value, torch.Tensor) else value, dtype=float)
        with_nan, with_inf = arr.copy(), arr.copy()
        with_nan.flat[0], with_inf.flat[-1] = NAN, INF
        out = common + [
            ("a scalar", 0.5, False),
            ("an empty array", np.zeros((0,) + arr.shape[1:]), False),
            ("NaN inside", with_nan, False),
            ("inf inside", with_inf, False),
            ("bool entries", arr > arr.flat[0], False),
            ("complex entries", arr + 1j, False),
            ("strings inside", arr.astype(str), False),
            ("one more axis", arr[None], False),
            ("one axis less", arr.reshape(-1) if arr.ndim > 1 else arr[:1].reshape(()), False),
            ("a ragged list", [[1.0], [1.0, 2.0]], False),
        ]
        return out + [(label, v, True) for label, v in _same_arrays(value)]
    if kind == "callable":
        return common + [
            ("returns None", lambda *a, **k: None, False),
            ("returns a string", lambda *a, **k: "x", False),
            ("returns NaN", _nan_like, False),
            ("raises", _raises, False),
        ]
    if kind == "str":
        return common + [("an unknown option", "nonsense", False), ("an int", 3, False)]
    return common + [("a float", 1.5, False), ("an array", np.ones((2, 2)), False)]


USERS_ERROR = "the user's function failed"


def _nan_like(*args, **kwargs):
    """NaN of the shape a function of points, sequences or (rng, k) would return."""
    first = args[0] if args else None
    if isinstance(first, np.random.Generator):
        return np.full((args[1], 2, 1), NAN)
    shape = np.shape(first)
    return np.full(shape[:-1] if len(shape) > 1 else shape, NAN)


def _raises(*args, **kwargs):
    raise RuntimeError(USERS_ERROR)


# --- classification ---------------------------------------------------------------------------


def _leaves(result):
    if isinstance(result, torch.nn.Module):
        yield from (p.detach().numpy() for p in result.parameters())
        return
    if dataclasses.is_dataclass(result) and not isinstance(result, type):
        for f in dataclasses.fields(result):
            yield from _leaves(getattr(result, f.name))
        return
    if isinstance(result, dict):
        for v in result.values():
            yield from _leaves(v)
        return
    if isinstance(result, list | tuple):
        for v in result:
            yield from _leaves(v)
        return
    if isinstance(result, pd.DataFrame):
        yield result.select_dtypes("number").to_numpy(dtype=float)
        return
    if isinstance(result, torch.Tensor):
        yield result.detach().to(torch.float64).numpy()
        return
    if isinstance(result, mpmath.mpf):
        yield np.array(float(result))
        return
    if isinstance(result, float | int | np.ndarray | np.floating | np.integer):
        arr = np.asarray(result)
        if arr.dtype.kind in "fiub":
            yield arr.astype(float)


def has_nan(result) -> bool:
    return any(np.isnan(leaf).any() for leaf in _leaves(result))


def same_result(a, b) -> bool:
    la, lb = list(_leaves(a)), list(_leaves(b))
    return len(la) == len(lb) and all(
        x.shape == y.shape and np.allclose(x, y, rtol=1e-12, atol=0, equal_nan=True)
        for x, y in zip(la, lb, strict=True)
    )


def names(message: str, arg: str, function: str) -> bool:
    """Whether an error message names the argument: the name as a word of its own (``arg must``,
    ``arg=``, ``m**dim``, ``f(centres)``; for ``a``, not the article), or the whole call quoted
    (``grid_centres(10**18, 2): ...``)."""
    follow = r"\s*(?:must|=|holds|has|is|:|\(|\[)" if arg == "a" else r"(?!\w)"
    if re.search(rf"(?<![\w.]){re.escape(arg)}{follow}", message):
        return True
    return f"{function.rsplit('.', 1)[-1]}(" in message


class _Slow(Exception):
    pass


def _alarm(signum, frame):
    raise _Slow


def classify(fn: Callable, kwargs: dict, arg: str, value, same: bool, want) -> tuple[str, str]:
    """Call ``fn(**kwargs)`` with ``kwargs[arg] = value``; ``(outcome, detail)``."""
    call = dict(kwargs, **{arg: value})
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, 10 * SECONDS)
    start = time.perf_counter()
    try:
        result = fn(**call)
    except _Slow:
        return "hang", "stopped after 10 s"
    except ValueError as e:
        took = time.perf_counter() - start
        if took > SECONDS:
            return "slow", f"refused after {took:.1f} s"
        named = names(str(e), arg, getattr(fn, "__qualname__", ""))
        return ("refused", str(e)) if named else ("unnamed", str(e)[:160])
    except RuntimeError as e:
        if str(e) == USERS_ERROR:  # the user's own function failed: passed on unchanged
            return "passed on", ""
        return "other", f"RuntimeError: {str(e)[:160]}"
    except Exception as e:  # noqa: BLE001 - the point: every other kind is a defect
        return "other", f"{type(e).__name__}: {str(e)[:160]}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    took = time.perf_counter() - start
    if took > SECONDS:
        return "slow", f"returned after {took:.1f} s"
    if has_nan(result):
        return "nan", "a result holding NaN"
    if same:
        return (
            ("right", "") if same_result(result, want) else ("wrong", "differs from the valid call")
        )
    return "accepted", ""


DEFECTS = ("unnamed", "other", "nan", "slow", "hang", "wrong")

#: Functions whose results hold NaN by their documentation: a grid that never reaches the target
#: (context lengths), the soft columns of a hard-only error row.
DOCUMENTED_NAN = (
    "cross.context_length",
    "cross.product_context_length",
    "tables.lookup_error_row",
)


def table() -> pd.DataFrame:
    """One row per call: function, argument, bad value, outcome, detail."""
    rows = []
    for name, (fn, kwargs) in baselines().items():
        want = fn(**kwargs)
        for arg, value in kwargs.items():
            for label, bad, same in bad_values(value):
                outcome, detail = classify(fn, kwargs, arg, bad, same, want)
                if outcome == "nan" and name in DOCUMENTED_NAN:
                    outcome = "accepted"
                rows.append(
                    dict(function=name, argument=arg, value=label, outcome=outcome, detail=detail)
                )
    return pd.DataFrame(rows)


if __name__ == "__main__":
    t = table()
    print(t.outcome.value_counts().to_string())
    bad = t[t.outcome.isin(DEFECTS)]
    with pd.option_context(
        "display.max_rows", None, "display.max_colwidth", 140, "display.width", 250
    ):
        print(bad.to_string())

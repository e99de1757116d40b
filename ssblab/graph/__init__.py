"""The follow graph on Spark: contact state, ssb-friends hops, replication, analytics, moderation, abouts.

`FollowNetwork` is the entry point for notebooks and the CLI; the modules underneath are pure ``DataFrame ->
DataFrame`` transforms (`frames`: contact state and edges; `traversal`: ssb-friends hops from many roots, the A.6
overlap experiment; `analytics`: degrees, PageRank, components, motifs, follow paths; `moderation`: what-if blocks,
shared moderation, resource-attack cliques; `about`: the about directory and the subjective reader). pyspark is
imported inside functions, so importing this package needs only the core dependencies.
"""

from ssblab.graph.about import about_directory, self_and_given, subjective_view
from ssblab.graph.analytics import (
    connected_components,
    degrees,
    follow_path,
    motif_counts,
    mutual_follows,
    pagerank,
    strongly_connected_components,
    triangles,
)
from ssblab.graph.frames import (
    DatasetError,
    contact_state,
    contacts_from_messages,
    follow_edges,
    follow_graph,
    load_contacts,
    weighted_edges,
)
from ssblab.graph.moderation import (
    Clique,
    SharedModeration,
    WhatIf,
    rank_cliques,
    resource_attack_cliques,
    shared_moderation,
    trusted_peers,
    whatif,
    with_blocks,
)
from ssblab.graph.network import FollowNetwork
from ssblab.graph.traversal import (
    Coverage,
    coverage,
    hops,
    hops_frame,
    hops_table,
    overlap_experiment,
)

__all__ = [
    "Clique",
    "Coverage",
    "DatasetError",
    "FollowNetwork",
    "SharedModeration",
    "WhatIf",
    "about_directory",
    "connected_components",
    "contact_state",
    "contacts_from_messages",
    "coverage",
    "degrees",
    "follow_edges",
    "follow_graph",
    "follow_path",
    "hops",
    "hops_frame",
    "hops_table",
    "load_contacts",
    "motif_counts",
    "mutual_follows",
    "overlap_experiment",
    "pagerank",
    "rank_cliques",
    "resource_attack_cliques",
    "self_and_given",
    "shared_moderation",
    "strongly_connected_components",
    "subjective_view",
    "triangles",
    "trusted_peers",
    "weighted_edges",
    "whatif",
    "with_blocks",
]

"""Tree utilities on hand-built trees."""

from synrob.perturb.io import tree

#        3
#      /   \
#     1     5
#     |     |
#     2     4
HEADS = [3, 1, 0, 5, 3]


def test_depths_root_edges() -> None:
    assert tree.root(HEADS) == 2
    assert tree.depths(HEADS) == [1, 2, 0, 2, 1]
    assert tree.max_depth(HEADS) == 2
    assert tree.undirected_edges(HEADS) == {(0, 2), (0, 1), (3, 4), (2, 4)}
    assert tree.children(HEADS) == [[1], [], [0, 4], [], [3]]


def test_distances_symmetric_and_correct() -> None:
    d = tree.distances(HEADS)
    assert d[1][3] == 4  # 2 -> 1 -> 3 -> 5 -> 4
    assert all(d[i][j] == d[j][i] for i in range(5) for j in range(5))
    assert all(d[i][i] == 0 for i in range(5))


def test_find_cycle() -> None:
    assert tree.find_cycle(HEADS) is None
    assert tree.find_cycle([0, 3, 2]) == [2, 3]

"""Dragging the tip of a planar linkage, as in G9.js interactive graphics.

n is the number of parameters: the joint angles of an arm of n unit-ish links.
The objective pulls the tip to the mouse (a target point) while a bending
penalty keeps neighbouring angles alike. Interactive graphics re-solves this
every frame, so one gradient must fit well inside a 16 ms frame (question 1):
tiny n, where per-call overhead, not arithmetic, decides the winner.
"""

BEND = 0.1  # weight of the bending penalty


def setup(n, rng):
    lengths = 1.0 + 0.1 * rng.random(n)
    target = rng.normal(size=2) * 0.5 * n
    return rng.normal(scale=0.3, size=n), {"lengths": lengths, "target": target}


def f(theta, data):
    heading = np.cumsum(theta)
    tip_x = np.sum(data["lengths"] * np.cos(heading))
    tip_y = np.sum(data["lengths"] * np.sin(heading))
    miss = (tip_x - data["target"][0]) ** 2 + (tip_y - data["target"][1]) ** 2
    return miss + BEND * np.sum((theta[1:] - theta[:-1]) ** 2)

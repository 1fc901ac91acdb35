"""Hand tracking: GradBench's ``ht`` eval, from Microsoft's ADBench, in both its variants.

n is the number of correspondences: observed 3-D points, each paired with a
point of a skinned hand mesh. f is the 3n residuals points[i] - hand point i
once the hand is posed by theta's 26 parameters (global rotation, global
translation, then 4 angles per finger), as in GradBench's ``evals/ht``
(github.com/gradbench/gradbench, MIT licence; Srajer, Schwarz and Fitzgibbon
2018, "A benchmark of selected algorithmic differentiation tools on some
problems in computer vision and machine learning").

VARIANT = "simple": point i pairs with the vertex correspondences[i]; x is
theta, and the Jacobian is 3n x 26: forward mode takes 26 passes whatever n,
reverse mode one per residual. ``us`` is not read.

VARIANT = "complicated" (the eval's default): point i pairs with a point on the
mesh's triangle correspondences[i], at barycentric coordinates (u, v, 1 - u - v)
given by us[i] = (u, v). The eval asks for the derivatives in each point's own
u and v too: x is (du, dv, theta), du and dv one shift of every point's (u, v),
zero at the eval's point. A residual reads its own point's (u, v) alone, so its
derivative in the shift is its derivative in its own u (and v): the 3n x 2n
block of the Jacobian, diagonal by point, compressed into two columns, which is
how ADBench lays it out (columns du, dv, then theta's 26: 3n x 28).

setup makes a synthetic hand with ADBench's skeleton (22 bones: the wrist, four
bones per finger, the forearm) and V vertices, each skinned to a few bones
(and, for the complicated variant, 2V - 4 random triangles). GradBench's own
hand models (544 and 10,000 vertices) come in through its eval's input
(``adlab.catalog.gradbench``).
"""

V = 544  # vertices of the synthetic hand (ADBench's small hand model has 544)
VARIANT = "simple"  # GradBench's: "simple" (points on vertices) or "complicated" (on triangles)

# ADBench's skeleton: each bone's parent, earlier in the list (-1: the root)
PARENTS = (-1, 0, 1, 2, 3, 0, 5, 6, 7, 0, 9, 10, 11, 0, 13, 14, 15, 0, 17, 18, 19, 0)


def setup(n, rng):
    bones = len(PARENTS)
    base_relatives = np.stack([_rigid(rng, 0.3) for _ in range(bones)])
    absolutes = []
    for i, parent in enumerate(PARENTS):
        rel = base_relatives[i]
        absolutes.append(rel if parent < 0 else absolutes[parent] @ rel)
    inverse_base_absolutes = np.linalg.inv(np.stack(absolutes))
    base_positions = np.concatenate([rng.normal(size=(V, 3)), np.ones((V, 1))], axis=1)
    # each vertex skinned to three random bones, weights summing to one
    weights = np.zeros((V, bones))
    for v in range(V):
        weights[v, rng.choice(bones, 3, replace=False)] = rng.dirichlet(np.ones(3))
    theta = rng.uniform(-0.5, 0.5, size=26)
    mirror = np.ones(3)  # ADBench's models are not mirrored
    model = (base_relatives, inverse_base_absolutes, base_positions, weights, mirror)
    if VARIANT == "complicated":
        x = np.concatenate([np.zeros(2), theta])
        triangles = np.stack([rng.choice(V, 3, replace=False) for _ in range(2 * V - 4)])
        correspondences = rng.integers(0, len(triangles), size=n)
        us = rng.dirichlet(np.ones(3), size=n)[:, :2]
    else:
        x = theta
        triangles = np.stack([np.arange(3)])  # not read
        correspondences = rng.integers(0, V, size=n)
        us = np.zeros((n, 2))  # not read
    data = (triangles, correspondences)
    points = -f(x, *model, *data, np.zeros((n, 3)), us).reshape(n, 3)
    points = points + 0.01 * rng.normal(size=(n, 3))
    return (x, *model, *data, points, us)


def _rigid(rng, angle):
    """A 4x4 rigid transform: a random small rotation, a random shift."""
    q, _ = np.linalg.qr(np.eye(3) + angle * rng.normal(size=(3, 3)))
    q = q * np.sign(np.linalg.det(q))
    return np.block([[q, rng.normal(size=(3, 1))], [np.zeros((1, 3)), np.ones((1, 1))]])


def bone_rotations(theta):
    """(22, 3, 3): each bone's rotation from theta's finger angles (ADBench's pose layout).

    A finger's four parameters turn its second bone about x and z, its third and
    fourth about x; the wrist, each finger's first bone and the forearm stay put.
    ADBench's Euler rotation is Rz Ry Rx with the y angle never set, so Ry = I.
    """
    fingers = theta[6:].reshape(5, 4)
    zero = fingers[:, :1] * 0.0
    ax = np.concatenate([zero, fingers[:, 0:1], fingers[:, 2:4]], axis=1).reshape(20)
    az = np.concatenate([zero, fingers[:, 1:2], zero, zero], axis=1).reshape(20)
    ax = np.concatenate([zero[0], ax, zero[0]])  # the wrist first, the forearm last
    az = np.concatenate([zero[0], az, zero[0]])
    cx, sx, cz, sz = np.cos(ax), np.sin(ax), np.cos(az), np.sin(az)
    zeros = ax * 0.0
    # Rz @ Rx, written out
    entries = [cz, -sz * cx, sz * sx, sz, cz * cx, -cz * sx, zeros, sx, cx]
    return np.stack(entries, axis=1).reshape(-1, 3, 3)


def angle_axis_rotation(r):
    """Rodrigues' rotation matrix for the angle-axis vector r; the identity when
    |r| < 1e-4, as ADBench does (the guard also keeps r/|r| finite at r = 0)."""
    sq = np.sum(r * r)
    # compared on the real part: under complex step sq is complex, and PyTorch and
    # TensorFlow cannot compare complex numbers (JAX and NumPy compare real parts)
    small = np.real(sq) < 1e-8
    norm = np.sqrt(np.where(small, 1.0, sq))
    x, y, z = r[0] / norm, r[1] / norm, r[2] / norm
    s, c = np.sin(norm), np.cos(norm)
    R = np.stack([
        x * x + (1 - x * x) * c, x * y * (1 - c) - z * s, x * z * (1 - c) + y * s,
        x * y * (1 - c) + z * s, y * y + (1 - y * y) * c, y * z * (1 - c) - x * s,
        x * z * (1 - c) - y * s, z * y * (1 - c) + x * s, z * z + (1 - z * z) * c,
    ]).reshape(3, 3)  # fmt: skip
    return np.where(small, np.eye(3), R)


def skinned(theta, base_relatives, inverse_base_absolutes, base_positions, weights, mirror,
            vertex):  # fmt: skip
    """(len(vertex), 3): the vertices ``vertex`` of the hand posed by theta."""
    # pose each bone: its base transform, turned by its rotation
    R = bone_rotations(theta)
    relatives = np.concatenate([base_relatives[:, :, :3] @ R, base_relatives[:, :, 3:]], axis=2)
    absolutes = []
    for i, parent in enumerate(PARENTS):
        absolutes.append(relatives[i] if parent < 0 else absolutes[parent] @ relatives[i])
    transforms = np.stack(absolutes) @ inverse_base_absolutes
    # skinning: a vertex is the weighted sum of where each bone takes it. Each vertex is
    # skinned on its own, so where fewer vertices are asked for than the hand has, only
    # those are (ADBench skins all V, then picks): the same residuals, with less work.
    # Where more are asked for (a vertex asked for many times), all V are, then picked.
    few = vertex.shape[0] < base_positions.shape[0]
    seen = base_positions[vertex] if few else base_positions
    posed = np.einsum("bij,nj->bni", transforms[:, :3, :], seen)
    vertices = np.einsum("nb,bni->ni", weights[vertex] if few else weights, posed) * mirror
    vertices = vertices if few else vertices[vertex]
    # the global pose (ADBench's scale is 1: its pose layout fixes it)
    return vertices @ angle_axis_rotation(theta[0:3]).T + theta[3:6]


def f(x, base_relatives, inverse_base_absolutes, base_positions, weights, mirror, triangles,
      correspondences, points, us):  # fmt: skip
    model = (base_relatives, inverse_base_absolutes, base_positions, weights, mirror)
    if VARIANT == "simple":
        return (points - skinned(x, *model, correspondences)).reshape(-1)
    n = points.shape[0]
    corners = skinned(x[2:], *model, triangles[correspondences].reshape(-1)).reshape(n, 3, 3)
    u = us + x[:2]  # each point's (u, v), shifted by x's first two
    vertices = (u[:, 0:1] * corners[:, 0] + u[:, 1:2] * corners[:, 1]
                + (1.0 - u[:, 0:1] - u[:, 1:2]) * corners[:, 2])  # fmt: skip
    return (points - vertices).reshape(-1)

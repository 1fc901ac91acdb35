"""Bundle adjustment: reprojection errors, GradBench's ``ba`` eval, from Microsoft's ADBench.

n is the number of observations p: observation i is camera i mod CAMERAS
seeing point i mod (the number of points) at pixel feats[i], the pairs
GradBench's eval and its C++ reference make. They are built in f, not passed
as data, so that the sparsity detection reads them from the program. x holds
every unknown, in the order of ADBench's Jacobian columns: CAMERAS cameras of
11 parameters (angle-axis rotation, centre, focal length, principal point, two
radial distortion coefficients), then the points (3 each), then one weight per
observation. f returns 3p residuals, also in ADBench's order: each
observation's weighted reprojection error w_i (project(cam, X) - feat_i) (two
rows), then each weight's error 1 - w_i^2. As in GradBench's ``evals/ba``
(github.com/gradbench/gradbench, MIT licence; Srajer, Schwarz and Fitzgibbon
2018). A residual depends on 15 unknowns at most (14 that its formula uses),
so the Jacobian is sparse: ``adlab.derivative(..., sparse=True)`` colors its
columns into 14 passes, whatever n.

setup draws random cameras looking at n // 4 random points, so each point is
seen about four times (3 to 5 in ADBench's problems). The number of points is
what x holds between the cameras and the weights.
"""

CAMERAS = 20  # cameras (GradBench's n; its problems have 21 (ba2) to 13,682)


def setup(n, rng):
    points = max(1, n // 4)
    cams = np.concatenate([
        0.1 * rng.normal(size=(CAMERAS, 3)),  # small rotations
        rng.normal(size=(CAMERAS, 3)) + [0.0, 0.0, -10.0],  # centres behind the points
        500.0 + 50.0 * rng.normal(size=(CAMERAS, 1)),  # focal length, in pixels
        rng.normal(size=(CAMERAS, 2)),  # principal point
        0.01 * rng.normal(size=(CAMERAS, 2)),  # radial distortion
    ], axis=1)  # fmt: skip
    X = rng.normal(size=(points, 3))
    w = rng.uniform(0.5, 1.0, size=n)
    feats = 50.0 * rng.normal(size=(n, 2))
    return np.concatenate([cams.ravel(), X.ravel(), w]), feats


def cross(a, b):
    """Row-wise cross product of two (p, 3) arrays."""
    return np.stack([
        a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1],
        a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2],
        a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0],
    ], axis=1)  # fmt: skip


def rodrigues_rotate(rot, X):
    """Each row of X turned by the angle-axis rotation in the same row of rot.

    A zero rotation takes ADBench's first-order formula X + rot x X; the guard
    also keeps rot/|rot| finite there.
    """
    sq = np.sum(rot * rot, axis=1, keepdims=True)
    turning = sq != 0.0
    theta = np.sqrt(np.where(turning, sq, 1.0))
    axis = rot / theta
    c, s = np.cos(theta), np.sin(theta)
    along = np.sum(axis * X, axis=1, keepdims=True) * (1.0 - c)
    rotated = X * c + cross(axis, X) * s + axis * along
    return np.where(turning, rotated, X + cross(rot, X))


def project(cam, X):
    """Pixel coordinates of X (p, 3) seen by cam (p, 11): rotate, divide by depth,
    distort radially, scale by the focal length, shift by the principal point."""
    Xcam = rodrigues_rotate(cam[:, 0:3], X - cam[:, 3:6])
    proj = Xcam[:, 0:2] / Xcam[:, 2:3]
    rsq = np.sum(proj * proj, axis=1, keepdims=True)
    L = 1.0 + cam[:, 9:10] * rsq + cam[:, 10:11] * rsq * rsq
    return proj * L * cam[:, 6:7] + cam[:, 7:9]


def cycle(rows, p):
    """p rows: rows 0, 1, ..., k-1, 0, 1, ... of a (k, d) array (row i is row i mod k).

    The same as rows[np.arange(p) % k], built by repeating instead of gathering:
    JAX batches the gather's tangents slowly (sparse forward mode took 5x longer).
    """
    k, d = rows.shape
    reps = -(-p // k)  # ceil(p / k)
    # rows[None]: autograd broadcasts only along axes the array has
    return np.broadcast_to(rows[None], (reps, k, d)).reshape(reps * k, d)[:p]


def f(x, feats):
    p = feats.shape[0]
    points = (x.shape[0] - 11 * CAMERAS - p) // 3
    cams = x[: 11 * CAMERAS].reshape(CAMERAS, 11)
    X = x[11 * CAMERAS : 11 * CAMERAS + 3 * points].reshape(points, 3)
    w = x[11 * CAMERAS + 3 * points :]
    reproj = w[:, None] * (project(cycle(cams, p), cycle(X, p)) - feats)
    return np.concatenate([reproj.reshape(-1), 1.0 - w * w])

"""A stacked LSTM's loss over a character sequence: GradBench's ``lstm`` eval, from Microsoft's ADBench.

n is the number of characters c in the sequence. Each character is a row of b
bits (its code point in binary, b = 7 here: lowercase letters and spaces); the
LSTM reads one character a step and predicts the next, and f is the negative
mean of target bit times log-softmax prediction over the c - 1 predictions, as
in GradBench's ``evals/lstm`` and its C++ reference (``cpp/gradbench/evals/lstm.hpp``,
after ADBench's ``lstm.h``; github.com/gradbench/gradbench, MIT licence; Srajer,
Schwarz and Fitzgibbon 2018). x is every parameter, in the order of the eval's
gradient: per layer, the weights then the biases of the forget, input, output
and change gates (b each: ADBench's weight "matrices" are diagonal), then the
input weights, output weights and output biases (b each); 8 LAYERS b + 3 b
numbers, whatever n. The data are the initial state (per layer a hidden row, then
a cell row) and the sequence.

ADBench's quirks are kept, so that the numbers are the reference's: the input
gate and the change read the layer's hidden state, the forget and output gates
its input; the log-softmax's normaliser adds 2 to the sum of exponentials.

The steps are a ``scan`` over the characters: on JAX one compiled iteration of four
steps, so the compile time does not grow with n; the layers, few, are unrolled inside it.
"""

LAYERS = 2  # stacked LSTM layers (GradBench's eval asks for 2, 4 and 6)


def setup(n, rng):
    # lowercase letters and spaces: the highest code point, "z", takes 7 bits
    codes = np.where(rng.random(n) < 0.18, ord(" "), rng.integers(ord("a"), ord("z") + 1, n))
    codes[0] = ord("z")  # the bit count is read from the text's largest code point
    bits = int(np.ceil(np.log2(codes.max())))
    sequence = ((codes[:, None] >> np.arange(bits - 1, -1, -1)) & 1).astype(float)
    x = rng.random(8 * LAYERS * bits + 3 * bits)
    state = rng.random((2 * LAYERS, bits))
    return x, state, sequence


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def f(x, state, sequence):
    layers, b = state.shape[0] // 2, state.shape[1]
    # per layer, the gates' (forget, input, output, change) weights, then their biases
    main = x[: 8 * layers * b].reshape(layers, 8, b)
    gates = [[main[i, k] for k in range(8)] for i in range(layers)]
    extra = x[8 * layers * b :].reshape(3, b)  # input weights, output weights and biases
    in_weight, out_weight, out_bias = extra[0], extra[1], extra[2]

    def step(carry, pair):
        hiddens, cells = carry  # one row of b per layer each
        char, target = pair
        out = char * in_weight
        new_hiddens, new_cells = [], []
        for (wf, wi, wo, wc, bf, bi, bo, bc), hidden, cell in zip(gates, hiddens, cells):
            forget = sigmoid(out * wf + bf)
            ingate = sigmoid(hidden * wi + bi)
            outgate = sigmoid(out * wo + bo)
            change = np.tanh(hidden * wc + bc)
            cell = cell * forget + ingate * change
            out = outgate * np.tanh(cell)
            new_hiddens.append(out)
            new_cells.append(cell)
        prediction = out * out_weight + out_bias
        # ADBench's normaliser: log(sum(exp) + 2)
        normalized = prediction - np.log(np.sum(np.exp(prediction)) + 2.0)
        return (tuple(new_hiddens), tuple(new_cells)), np.sum(target * normalized)

    start = tuple(tuple(state[2 * i + k] for i in range(layers)) for k in (0, 1))  # h, c
    # four steps per compiled iteration (JAX's unroll): 10.5x -> 9.1x f's time for the
    # gradient at 4 layers, 1,024 characters; the loop's overhead is per iteration
    _, totals = scan(step, start, (sequence[:-1], sequence[1:]), unroll=4)
    return -np.sum(totals) / ((sequence.shape[0] - 1) * b)

/*
 * pulp_random.h: the library's random numbers: MT19937's twist and tempering
 * on a 16-word state (STATE_VECTOR_LENGTH 16, STATE_VECTOR_M 10), so not the
 * 624-word MT19937 of other libraries. Single core.
 *
 *   seedRand(s): mt[0] = s, mt[i] = 6069 * mt[i-1] mod 2^32, index 16.
 *   genRandLong: twists the state when index >= 16 (index >= 17 or < 0:
 *     seeds with 4357 first), then tempers mt[index++].
 *   genRand = y / 4294967295.0;  genRandFloat = (float)y / 4294967296.0f.
 *   pulp_generate_float_seed(s): the first genRandFloat after seedRand(s)
 *     (0 -> 0, 1 -> 0.70285904, 42 -> 0.80048698).
 *   pulp_random_bernoulli: *output = r > probability ? 0 : 1, with r =
 *     pulp_generate_float_seed(seed).
 */
#ifndef PULP_RANDOM_H
#define PULP_RANDOM_H

#include <stdint.h>

#define STATE_VECTOR_LENGTH 16
#define STATE_VECTOR_M 10

typedef struct tagMTRand {
    uint32_t mt[STATE_VECTOR_LENGTH];
    int32_t index;
} MTRand;

struct integer_random_args {
    int seed;
    float probability;
    int *output;
};

MTRand seedRand(uint32_t seed);
uint32_t genRandLong(MTRand *rand);
double genRand(MTRand *rand);
float genRandFloat(MTRand *rand);
float pulp_generate_float_seed(int seed);
void pulp_random_bernoulli(void *integer_random_args);

#endif /* PULP_RANDOM_H */

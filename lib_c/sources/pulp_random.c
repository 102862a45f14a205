/*
 * pulp_random.c: the 16-word MT19937 variant (pulp_random.h).
 */
#include "pulp_random.h"

#define UPPER_MASK 0x80000000u
#define LOWER_MASK 0x7fffffffu
#define TEMPERING_MASK_B 0x9d2c5680u
#define TEMPERING_MASK_C 0xefc60000u
#define MATRIX_A 0x9908b0dfu

MTRand seedRand(uint32_t seed)
{
    MTRand rand = {.index = STATE_VECTOR_LENGTH};
    rand.mt[0] = seed;
    for (int i = 1; i < STATE_VECTOR_LENGTH; i++)
        rand.mt[i] = 6069u * rand.mt[i - 1];
    return rand;
}

static void twist(MTRand *rand)
{
    for (int k = 0; k < STATE_VECTOR_LENGTH; k++) {
        const uint32_t y = (rand->mt[k] & UPPER_MASK) | (rand->mt[(k + 1) % STATE_VECTOR_LENGTH] & LOWER_MASK);
        rand->mt[k] = rand->mt[(k + STATE_VECTOR_M) % STATE_VECTOR_LENGTH] ^ (y >> 1) ^ ((y & 1u) ? MATRIX_A : 0u);
    }
    rand->index = 0;
}

uint32_t genRandLong(MTRand *rand)
{
    if (rand->index >= STATE_VECTOR_LENGTH || rand->index < 0) {
        if (rand->index >= STATE_VECTOR_LENGTH + 1 || rand->index < 0)
            *rand = seedRand(4357u);
        twist(rand);
    }
    uint32_t y = rand->mt[rand->index++];
    y ^= y >> 11;
    y ^= (y << 7) & TEMPERING_MASK_B;
    y ^= (y << 15) & TEMPERING_MASK_C;
    y ^= y >> 18;
    return y;
}

double genRand(MTRand *rand)
{
    return (double)genRandLong(rand) / 4294967295.0;
}

float genRandFloat(MTRand *rand)
{
    return (float)genRandLong(rand) / 4294967296.0f;
}

float pulp_generate_float_seed(int seed)
{
    MTRand rand = seedRand((uint32_t)seed);
    return genRandFloat(&rand);
}

void pulp_random_bernoulli(void *integer_random_args)
{
    struct integer_random_args *a = integer_random_args;
    *a->output = pulp_generate_float_seed(a->seed) > a->probability ? 0 : 1;
}

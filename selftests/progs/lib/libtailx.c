// SPDX-License-Identifier: GPL-2.0
/*
 * libtailx.so: tailx's library (selftest 40), whose functions get a
 * trampoline area of their own, far from the program's. tx_hop() ends in
 * a tail call through a pointer into the program (jmp *%rax), and
 * tx_libleaf() is what the program's tx_mid() ends in a tail call of
 * (jmp tx_libleaf@plt): the return address either callee finds is a
 * record thunk of the other area.
 */
unsigned long tx_hop(unsigned long (*f)(unsigned long), unsigned long i)
{
	return f(i * 7 + 1);
}

unsigned long tx_libleaf(unsigned long i)
{
	unsigned long k, s = i;

	for (k = 0; k < 32; k++)
		s = s * 33 + k;
	return s;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * benchboot_vcio: /dev/vcio for Debian's kernels.
 *
 * Debian builds the upstream Raspberry Pi firmware driver into every flavour
 * (CONFIG_RASPBERRYPI_FIRMWARE=y and CONFIG_BCM2835_MBOX=y in the pinned 6.1.0-50
 * rpi, armmp and arm64 configs) but not the downstream character device
 * drivers/char/broadcom/vcio.c of raspberrypi/linux. This module is that device's
 * ioctl, same number and same buffer layout, so PID 1's firmware/src/health.rs
 * reads throttle flags, firmware clocks and the temperature unchanged.
 *
 * IOCTL_MBOX_PROPERTY = _IOWR(100, 0, char *): the argument points at a whole
 * mailbox property message (u32 words, host byte order):
 *   u32 total size in bytes, u32 request code, tags..., u32 end tag 0.
 * Upstream's rpi_firmware_property_list() (drivers/firmware/raspberrypi.c, 6.1)
 * takes only the tags and adds the 8-byte header and 4-byte end tag itself, so
 * (as vcio.c does) we pass &buf[2] and size - 12, copy the tags back and set the
 * buffer's response code to RPI_FIRMWARE_STATUS_SUCCESS. A firmware error
 * (buffer code != success) comes back from property_list as -EINVAL and is
 * returned by the ioctl, as vcio.c does.
 *
 * The module is not signed: the pinned kernels have CONFIG_MODULE_SIG=y without
 * CONFIG_MODULE_SIG_FORCE, so it loads and taints the kernel ('E', unsigned
 * module; 'O', out-of-tree).
 */
#include <linux/compat.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/of.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <soc/bcm2835/raspberrypi-firmware.h>

#define VCIO_IOC_MAGIC 100
#define IOCTL_MBOX_PROPERTY _IOWR(VCIO_IOC_MAGIC, 0, char *)
#ifdef CONFIG_COMPAT
/* A 32-bit process on arm64 encodes a 4-byte pointer in the ioctl number. */
#define IOCTL_MBOX_PROPERTY32 _IOWR(VCIO_IOC_MAGIC, 0, compat_uptr_t)
#endif

/*
 * Largest message accepted, in bytes. Our messages are 32 bytes (one tag);
 * vcgencmd-style tags fit in 1 KiB. A hostile size must not make the kernel
 * allocate much (vcio.c allocates whatever the size word says).
 */
#define VCIO_MAX_MSG 1024
/* Header (size, code) and end tag: vcio.c's "size - 12". */
#define VCIO_ENVELOPE 12

static struct rpi_firmware *vcio_fw;

static long vcio_property_list(void __user *user)
{
	u32 size, *buf;
	int ret;

	if (copy_from_user(&size, user, sizeof(size)))
		return -EFAULT;
	/* property_list rejects sizes that are not whole words with -EINVAL too. */
	if (size < VCIO_ENVELOPE || size > VCIO_MAX_MSG || (size & 3))
		return -EINVAL;

	buf = memdup_user(user, size);
	if (IS_ERR(buf))
		return PTR_ERR(buf);

	ret = rpi_firmware_property_list(vcio_fw, &buf[2], size - VCIO_ENVELOPE);
	if (ret) {
		kfree(buf);
		return ret;
	}

	buf[1] = RPI_FIRMWARE_STATUS_SUCCESS;
	if (copy_to_user(user, buf, size))
		ret = -EFAULT;
	kfree(buf);
	return ret;
}

static long vcio_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	switch (cmd) {
	case IOCTL_MBOX_PROPERTY:
		return vcio_property_list((void __user *)arg);
	default:
		return -ENOTTY;
	}
}

#ifdef CONFIG_COMPAT
static long vcio_compat_ioctl(struct file *file, unsigned int cmd,
			      unsigned long arg)
{
	switch (cmd) {
	case IOCTL_MBOX_PROPERTY32:
		return vcio_property_list(compat_ptr(arg));
	default:
		return -ENOTTY;
	}
}
#endif

static const struct file_operations vcio_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = vcio_ioctl,
#ifdef CONFIG_COMPAT
	.compat_ioctl = vcio_compat_ioctl,
#endif
};

static struct miscdevice vcio_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "vcio",
	.fops = &vcio_fops,
	.mode = 0600,
};

static int __init vcio_init(void)
{
	struct device_node *np;
	int ret;

	np = of_find_compatible_node(NULL, NULL, "raspberrypi,bcm2835-firmware");
	if (!np) {
		pr_err("benchboot_vcio: no raspberrypi,bcm2835-firmware node in the device tree\n");
		return -ENODEV;
	}
	vcio_fw = rpi_firmware_get(np);
	of_node_put(np);
	if (!vcio_fw) {
		/* The firmware driver has not probed (no mailbox). */
		pr_err("benchboot_vcio: the Raspberry Pi firmware driver is not bound\n");
		return -ENODEV;
	}

	ret = misc_register(&vcio_misc);
	if (ret) {
		rpi_firmware_put(vcio_fw);
		return ret;
	}
	return 0;
}

static void __exit vcio_exit(void)
{
	misc_deregister(&vcio_misc);
	rpi_firmware_put(vcio_fw);
}

module_init(vcio_init);
module_exit(vcio_exit);

MODULE_DESCRIPTION("benchboot: /dev/vcio (IOCTL_MBOX_PROPERTY) over the upstream Raspberry Pi firmware driver");
MODULE_LICENSE("GPL");

package io.sibyl.oracle;

import io.netty.channel.ChannelPipeline;
import io.netty.handler.ssl.SslHandler;

import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.security.auth.x500.X500Principal;
import java.security.cert.Certificate;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.Collection;
import java.util.List;

/**
 * Reads the identity a connection's verified client certificate gives it, from the field {@code tls.identity}
 * chooses ({@link IdentitySettings.CertificateField}).
 */
final class CertificateIdentity {
    /** Subject alternative name types of RFC 5280 (X509Certificate#getSubjectAlternativeNames). */
    private static final int SAN_DNS = 2;
    private static final int SAN_URI = 6;

    private final IdentitySettings.CertificateField field;

    CertificateIdentity(IdentitySettings.CertificateField field) {
        this.field = field;
    }

    /**
     * The identity of the client certificate the TLS handshake of {@code pipeline} verified, or null when the
     * connection has no TLS or its client sent no certificate (the oracle asked for none).
     *
     * @throws IllegalArgumentException when the certificate has no such field; the message names {@code tls.identity}
     */
    String of(ChannelPipeline pipeline) {
        SslHandler tls = pipeline.get(SslHandler.class);
        if (tls == null) {
            return null;
        }
        Certificate[] chain;
        try {
            chain = tls.engine().getSession().getPeerCertificates();
        } catch (SSLPeerUnverifiedException e) {
            return null;
        }
        if (chain.length == 0 || !(chain[0] instanceof X509Certificate certificate)) {
            return null;
        }
        return of(certificate);
    }

    /** The identity {@code certificate} gives its holder. */
    String of(X509Certificate certificate) {
        String name = switch (field) {
            case CN -> commonName(certificate.getSubjectX500Principal());
            case DN -> certificate.getSubjectX500Principal().getName(X500Principal.RFC2253);
            case SAN_DNS -> alternativeName(certificate, SAN_DNS);
            case SAN_URI -> alternativeName(certificate, SAN_URI);
        };
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("the client certificate of " + certificate.getSubjectX500Principal()
                    + " has no " + field.key() + " to name it (tls.identity=" + field.key() + "): give the client a"
                    + " certificate with one, or choose another tls.identity on the oracle");
        }
        return name;
    }

    private static String commonName(X500Principal subject) {
        try {
            List<Rdn> rdns = new LdapName(subject.getName(X500Principal.RFC2253)).getRdns();
            // LdapName lists the most significant part first: the last CN is the most specific one.
            String cn = null;
            for (Rdn rdn : rdns) {
                if (rdn.getType().equalsIgnoreCase("CN")) {
                    cn = rdn.getValue().toString();
                }
            }
            return cn;
        } catch (InvalidNameException e) {
            return null;
        }
    }

    private static String alternativeName(X509Certificate certificate, int type) {
        try {
            Collection<List<?>> names = certificate.getSubjectAlternativeNames();
            if (names == null) {
                return null;
            }
            for (List<?> entry : names) {
                if (entry.size() >= 2 && entry.get(0) instanceof Integer t && t == type) {
                    return String.valueOf(entry.get(1));
                }
            }
            return null;
        } catch (CertificateParsingException e) {
            return null;
        }
    }
}
